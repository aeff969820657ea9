import { createHash } from 'node:crypto';
import cors from 'cors';
import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import { redirectUriMatches } from '@modelcontextprotocol/sdk/server/auth/handlers/authorize.js';
import {
  InvalidClientError, InvalidClientMetadataError, InvalidRequestError, InvalidTargetError, OAuthError, ServerError, TooManyRequestsError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { type OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { type LimitName, type RateLimits } from '../rate-limit/rate-limits.service';
import { type TollgateOAuthProvider } from './oauth-provider';
import { checkClientMetadata, ClientParams, firstProblem, OAUTH_LIMITS, redirectUriProblem, RequestParams } from './oauth-inputs';

/** An OAuth error answered directly (never redirected): 400, or 500 for the server's own failure. */
export function answerError(res: Response, error: OAuthError, status = error instanceof ServerError ? 500 : 400): void {
  res.status(status).json(error.toResponseObject());
}

/** The issuer identifier: the base URL exactly as the metadata names it (no trailing slash, RFC 8414 section 3.3). */
const issuerOf = (res: Response) => String(res.locals['oauthBase']);

/** The redirect URI this request may be answered at: one the client registered (loopback: any port, RFC 8252). */
function redirectUriOf(client: OAuthClientInformationFull, asked: string | undefined): string | undefined {
  const uri = asked ?? (client.redirect_uris.length === 1 ? client.redirect_uris[0] : undefined);
  if (!uri || !client.redirect_uris.some((registered) => redirectUriMatches(uri, registered))) return undefined;
  return redirectUriProblem(uri) ? undefined : uri;
}

/** The error at the client's validated redirect URI, with its state and the issuer (RFC 9207). */
function errorRedirect(redirectUri: string, error: OAuthError, state: string | undefined, issuer: string): string {
  const url = new URL(redirectUri);
  url.searchParams.set('error', error.errorCode);
  url.searchParams.set('error_description', error.message);
  if (state !== undefined) url.searchParams.set('state', state);
  url.searchParams.set('iss', issuer);
  return url.href;
}

/**
 * `/authorize`: nothing is redirected before the client and its redirect URI are known good (an unknown client or
 * URI is answered here, never sent elsewhere: no open redirect); every parameter is bounded; an error sent back
 * carries the state and `iss`, and a sentence, never the validator's text.
 */
export function authorizeEndpoint(provider: TollgateOAuthProvider): RequestHandler {
  return async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const input = (req.method === 'POST' ? req.body : req.query) as Record<string, unknown>;
    const c = ClientParams.safeParse(input);
    if (!c.success) return answerError(res, new InvalidRequestError(firstProblem(c.error)));
    const client = await provider.clientsStore.getClient(c.data.client_id).catch(() => undefined);
    if (!client) return answerError(res, new InvalidClientError('Unknown client_id, or its client metadata document could not be used.'));
    const redirectUri = redirectUriOf(client, c.data.redirect_uri);
    if (!redirectUri) return answerError(res, new InvalidRequestError('redirect_uri is not one this client registered.'));
    const state = typeof input['state'] === 'string' && input['state'].length <= OAUTH_LIMITS.state ? input['state'] : undefined;
    const fail = (e: OAuthError) => res.redirect(302, errorRedirect(redirectUri, e, state, issuerOf(res)));
    const p = RequestParams.safeParse(input);
    if (!p.success) return fail(new InvalidRequestError(firstProblem(p.error)));
    try {
      await provider.authorize(client, {
        state: p.data.state, scopes: p.data.scope?.split(' ') ?? [], redirectUri, codeChallenge: p.data.code_challenge,
        resource: p.data.resource ? new URL(p.data.resource) : undefined,
      }, res);
    } catch (e) {
      fail(e instanceof OAuthError ? e : new ServerError('The authorization request could not be handled.'));
    }
  };
}

/** `/register` (RFC 7591): public clients only, metadata bounded and redirect URIs https or loopback. */
export function registrationEndpoint(provider: TollgateOAuthProvider): RequestHandler {
  const router = express.Router();
  router.use(cors());
  router.post('/', async (req, res) => {
    res.setHeader('Cache-Control', 'no-store');
    const checked = checkClientMetadata(req.body);
    if (!checked.ok) return answerError(res, new InvalidClientMetadataError(checked.problem));
    try {
      res.status(201).json(await provider.clientsStore.registerClient(checked.metadata));
    } catch (e) {
      answerError(res, e instanceof OAuthError ? e : new ServerError('The registration could not be stored.'));
    }
  });
  router.all('/', (_req, res) => void res.status(405).set('Allow', 'POST').json({ error: 'method_not_allowed', error_description: 'POST a client registration.' }));
  return router;
}

/** Counts a request against a limit kept in PostgreSQL (shared by every replica), keyed by `subject`. */
export function limitedBy(limits: RateLimits, name: LimitName, subject: (req: Request) => string): RequestHandler {
  return (req, res, next) => {
    limits.consume(name, subject(req)).then((outcome) => {
      if (outcome.ok) return next();
      res.setHeader('Retry-After', String(Math.ceil(outcome.retryAfterMs / 1000)));
      answerError(res, new TooManyRequestsError('Too many requests; try again in a minute.'), 429);
    }, next);
  };
}

/** The client address as the trusted proxies state it, with the client a request names (hashed: it may be a long URL). */
export const addressAndClient = (req: Request) => {
  const clientId = typeof req.body?.client_id === 'string' ? req.body.client_id : '-';
  return `addr:${req.ip ?? 'unknown'}|client:${createHash('sha256').update(clientId).digest('base64url').slice(0, 22)}`;
};

/** A `resource` a token request names must be on this gateway's origin: a refresh never reaches another server's resource. */
export function resourceOnThisOrigin(req: Request, res: Response, next: NextFunction): void {
  const resource = req.body?.resource as unknown;
  if (resource === undefined) return next();
  const base = new URL(String(res.locals['oauthBase']));
  if (typeof resource !== 'string' || !URL.canParse(resource) || new URL(resource).origin !== base.origin) {
    return answerError(res, new InvalidTargetError(`The resource must be an MCP URL of this gateway (${base.origin}/mcp/<slug>).`));
  }
  next();
}

/** Body-parser refusals (too large, malformed) answered as OAuth errors, never as the parser's own text. */
export function bodyErrors(err: { type?: string; status?: number }, _req: Request, res: Response, next: NextFunction): void {
  if (res.headersSent) return next(err);
  if (err.type === 'entity.too.large') return answerError(res, new InvalidRequestError('The request body is too large.'), 413);
  if (err.status && err.status < 500) return answerError(res, new InvalidRequestError('The request body could not be read.'));
  answerError(res, new ServerError('The request could not be handled.'));
}
