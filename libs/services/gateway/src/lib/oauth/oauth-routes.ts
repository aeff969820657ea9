import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { type INestApplication } from '@nestjs/common';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { revocationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/revoke.js';
import { tokenHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/token.js';
import { Identities } from '../authenticate/identities.repository';
import { GATEWAY } from '../gateway.constants';
import { GATEWAY_OPTIONS } from '../gateway.constants';
import { type GatewayOptions } from '../gateway.options';
import { RateLimits } from '../rate-limit/rate-limits.service';
import { addressAndClient, authorizeEndpoint, bodyErrors, limitedBy, registrationEndpoint, resourceOnThisOrigin } from './oauth-endpoints';
import { MCP_SCOPE, TollgateOAuthProvider } from './oauth-provider';

/** Every OAuth request is small: a few parameters, or a client's metadata (5 KiB at most). */
const BODY_LIMIT = '8kb';

/** The gateway's base URL as this request reached it (or the configured public URL): the issuer and the resources' origin. */
export function baseOf(req: Request, publicUrl: string | undefined): string {
  return (publicUrl ?? `${req.protocol}://${req.get('host')}`).replace(/\/+$/, '');
}

/** Where the protected-resource metadata of an MCP URL lives (RFC 9728, the path inserted after the well-known prefix). */
export function resourceMetadataUrl(base: string, slug: string): string {
  return `${base}/.well-known/oauth-protected-resource/mcp/${slug}`;
}

/**
 * The authorization server's HTTP surface, on the MCP SDK's OAuth handlers (request validation, client
 * authentication, PKCE, CORS and rate limits are theirs; the decisions are `TollgateOAuthProvider`'s):
 * `/authorize`, `/token`, `/register` (RFC 7591), `/revoke` (RFC 7009), the server's metadata (RFC 8414) and each
 * MCP URL's protected-resource metadata (RFC 9728). Both metadata documents are per request, from the base URL the
 * client used, so the resource a client derives from its MCP URL is the one the metadata names.
 */
@Injectable()
export class OAuthRoutes {
  readonly handler: RequestHandler;

  constructor(
    @Inject(GATEWAY_OPTIONS) private readonly options: GatewayOptions,
    provider: TollgateOAuthProvider,
    @InjectDataSource(GATEWAY) private readonly dataSource: DataSource,
    limits: RateLimits,
  ) {
    const router = express.Router();
    router.use((req: Request, res: Response, next: NextFunction) => {
      res.locals['oauthBase'] = baseOf(req, this.options.oauth?.publicUrl);
      next();
    });
    // Rate limits in PostgreSQL (every replica shares them), keyed by the client address the trusted proxies state;
    // the token endpoints also by the client named, so one caller cannot lock every other app out.
    const byAddress = (req: Request) => `addr:${req.ip ?? 'unknown'}`;
    const form = express.urlencoded({ extended: false, limit: BODY_LIMIT });
    router.all('/authorize', form, limitedBy(limits, 'oauthAuthorize', byAddress), authorizeEndpoint(provider));
    router.use('/token', form, limitedBy(limits, 'oauthToken', addressAndClient), resourceOnThisOrigin, tokenHandler({ provider, rateLimit: false }));
    router.use('/register', express.json({ limit: BODY_LIMIT }), limitedBy(limits, 'oauthRegister', byAddress), registrationEndpoint(provider));
    router.use('/revoke', form, limitedBy(limits, 'oauthToken', addressAndClient), revocationHandler({ provider, rateLimit: false }));
    router.get('/.well-known/oauth-authorization-server', (_req, res) => this.serverMetadata(res));
    router.get('/.well-known/oauth-protected-resource/mcp/:slug', (req, res, next) => this.resourceMetadata(req, res).catch(next));
    router.use(bodyErrors);
    this.handler = router;
  }

  private serverMetadata(res: Response): void {
    const base = String(res.locals['oauthBase']);
    res.setHeader('Access-Control-Allow-Origin', '*');
    res.json({
      issuer: base,
      authorization_endpoint: `${base}/authorize`,
      token_endpoint: `${base}/token`,
      registration_endpoint: `${base}/register`,
      revocation_endpoint: `${base}/revoke`,
      response_types_supported: ['code'],
      grant_types_supported: ['authorization_code', 'refresh_token'],
      code_challenge_methods_supported: ['S256'],
      // Public clients only (PKCE is their proof): no client secret is ever issued, so none is advertised.
      token_endpoint_auth_methods_supported: ['none'],
      revocation_endpoint_auth_methods_supported: ['none'],
      scopes_supported: [MCP_SCOPE],
      client_id_metadata_document_supported: true,
      authorization_response_iss_parameter_supported: true,
    });
  }

  private async resourceMetadata(req: Request, res: Response): Promise<void> {
    const slug = String(req.params['slug']).toLowerCase();
    res.setHeader('Access-Control-Allow-Origin', '*');
    if (!(await Identities.enabledUrl(this.dataSource, slug))) {
      res.status(404).json({ error: 'not_found', error_description: 'No MCP server at this URL' });
      return;
    }
    const base = String(res.locals['oauthBase']);
    res.json({
      resource: `${base}/mcp/${slug}`,
      authorization_servers: [base],
      scopes_supported: [MCP_SCOPE],
      bearer_methods_supported: ['header'],
      resource_name: `Tollgate /mcp/${slug}`,
    });
  }
}

/** The paths the OAuth router serves; every other request (the MCP calls) skips it with one test. */
const OAUTH_PATH = /^\/(?:authorize|token|register|revoke|\.well-known\/oauth-)/;

/** Mounts the OAuth routes at the root of the gateway's HTTP app (before Nest's own routes). */
export function mountOAuth(app: INestApplication): void {
  const { handler } = app.get(OAuthRoutes);
  app.use((req: Request, res: Response, next: NextFunction) => (OAUTH_PATH.test(req.path) ? handler(req, res, next) : next()));
}
