import { randomBytes, randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { type Response } from 'express';
import { InvalidGrantError, InvalidTargetError, InvalidTokenError, UnauthorizedClientError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { type AuthorizationParams, type OAuthServerProvider } from '@modelcontextprotocol/sdk/server/auth/provider.js';
import { type AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { type OAuthClientInformationFull, type OAuthTokenRevocationRequest, type OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import { hashCredential } from '../authenticate/credential-hash';
import { Identities } from '../authenticate/identities.repository';
import { IdentityCache } from '../authenticate/identity-cache.service';
import { GATEWAY, GATEWAY_OPTIONS } from '../gateway.constants';
import { type GatewayOptions } from '../gateway.options';
import { OAuthClients } from './oauth-clients';
import { OAuthRecords, type OAuthGrantRow } from './oauth.repository';

/** The one scope: use the MCP URL the token is bound to, as the approved agent. */
export const MCP_SCOPE = 'mcp';
const REQUEST_TTL_MS = 10 * 60_000;
export const OAUTH_DEFAULTS = { accessTtlS: 3600, refreshTtlS: 30 * 24 * 3600 };

/** The MCP URL's slug a resource indicator names, on this gateway's base (`<base>/mcp/<slug>`). */
export function slugOfResource(resource: URL | undefined, base: string): string | undefined {
  if (!resource) return undefined;
  const b = new URL(base);
  const m = /^\/mcp\/([a-z0-9][a-z0-9-]{0,62})\/?$/i.exec(resource.pathname);
  return resource.origin === b.origin && !resource.search && !resource.hash && m ? m[1]!.toLowerCase() : undefined;
}

const newSecret = (prefix: string) => `${prefix}${randomBytes(32).toString('base64url')}`;

/**
 * The authorization server's decisions, behind the MCP SDK's OAuth handlers (which check the request's shape, the
 * client and its redirect URI, and PKCE): an authorization waits for the owner's consent (`ConsentController`); a
 * code is redeemed once; a refresh token is rotated on every use; an access token is a credential of the approved
 * agent, bound to the one MCP URL the resource indicator (RFC 8707) named, so it never reaches more than that agent
 * may on that URL (G1), and revoking the grant ends it.
 */
@Injectable()
export class TollgateOAuthProvider implements OAuthServerProvider {
  readonly clientsStore: OAuthClients;

  constructor(
    @InjectDataSource(GATEWAY) private readonly dataSource: DataSource,
    @Inject(GATEWAY_OPTIONS) private readonly options: GatewayOptions,
    private readonly cache: IdentityCache,
  ) {
    this.clientsStore = new OAuthClients(dataSource, options.oauth?.loopbackHttpClientIds ?? false, options.oauth?.outbound);
  }

  /** Records the request and sends the browser to the owner's consent page (`res.locals.oauthBase`: the base URL the client used). */
  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response): Promise<void> {
    const base = String(res.locals['oauthBase']);
    const slug = slugOfResource(params.resource, base);
    if (!slug) throw new InvalidTargetError(`Name the MCP URL to sign in to as the resource parameter: ${base}/mcp/<slug>.`);
    const url = await Identities.enabledUrl(this.dataSource, slug);
    if (!url) throw new InvalidTargetError(`No MCP server at ${base}/mcp/${slug}.`);
    const requestId = randomUUID();
    await OAuthRecords.insertRequest(this.dataSource, {
      request_id: requestId, client_id: client.client_id, client_name: (client.client_name ?? client.client_id).slice(0, 200), redirect_uri: params.redirectUri,
      code_challenge: params.codeChallenge, state: params.state ?? null, scopes: MCP_SCOPE, resource: `${base}/mcp/${slug}`, issuer: base,
      mcp_url_id: url.mcp_url_id, expires_at: new Date(Date.now() + REQUEST_TTL_MS),
    });
    res.redirect(302, `${base}/oauth/consent/${requestId}`);
  }

  /** The SDK asks this first (PKCE), so a replayed code is caught here. */
  async challengeForAuthorizationCode(_client: OAuthClientInformationFull, code: string): Promise<string> {
    const codeHash = hashCredential(code);
    const r = await OAuthRecords.requestOfCode(this.dataSource, codeHash);
    return r ? r.code_challenge : this.refuseCode(codeHash);
  }

  async exchangeAuthorizationCode(client: OAuthClientInformationFull, code: string, _verifier?: string, redirectUri?: string, resource?: URL): Promise<OAuthTokens> {
    const codeHash = hashCredential(code);
    const r = await OAuthRecords.requestOfCode(this.dataSource, codeHash);
    if (!r || r.client_id !== client.client_id) return this.refuseCode(codeHash);
    if (redirectUri !== undefined && redirectUri !== r.redirect_uri) throw new InvalidGrantError('redirect_uri differs from the authorization request.');
    if (resource && resource.href.replace(/\/$/, '') !== r.resource) throw new InvalidTargetError('The resource differs from the one the owner approved.');
    const tokens = await this.dataSource.transaction(async (m) => {
      // The row lock of the redemption orders racing requests: one redeems, the others find it used.
      const grantId = await OAuthRecords.redeem(m, codeHash);
      const grant = grantId ? await OAuthRecords.liveGrant(m, grantId) : undefined;
      return grant && this.issue(m, grant);
    });
    // A request that lost the race presented a used code: a replay, handled as one (after the winner committed).
    return tokens ?? this.refuseCode(codeHash);
  }

  async exchangeRefreshToken(client: OAuthClientInformationFull, refreshToken: string, scopes?: string[], resource?: URL): Promise<OAuthTokens> {
    if (scopes?.some((s) => s !== MCP_SCOPE)) throw new InvalidGrantError('A refresh never widens the grant.');
    const hash = hashCredential(refreshToken);
    // A rotated-away refresh token presented again: someone else holds the grant's tokens. End it (OAuth 2.1 rotation).
    const reused = await OAuthRecords.grantOfRotatedRefresh(this.dataSource, hash);
    if (reused) {
      if (await OAuthRecords.revokeGrant(this.dataSource, reused)) await this.cache.changed(this.dataSource);
      throw new InvalidGrantError('The refresh token was already used: the grant is revoked, and the owner must approve again.');
    }
    return this.dataSource.transaction(async (m) => {
      const grant = await OAuthRecords.grantOfRefresh(m, hash);
      if (!grant || grant.client_id !== client.client_id) throw new InvalidGrantError('The refresh token is invalid, expired, rotated or revoked.');
      if (resource) {
        const slug = slugOfResource(resource, resource.origin);
        const url = slug ? await Identities.enabledUrl(this.dataSource, slug) : undefined;
        if (url?.mcp_url_id !== grant.mcp_url_id) throw new InvalidTargetError('A refresh is for the MCP URL the owner approved, never another.');
      }
      return this.issue(m, grant);
    });
  }

  /** The SDK's bearer middleware is not used (the MCP routes authenticate credentials and tokens alike); kept for completeness. */
  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const cred = await Identities.liveCredential(this.dataSource, hashCredential(token));
    if (!cred?.mcp_url_id) throw new InvalidTokenError('The access token is invalid, expired or revoked.');
    return { token, clientId: cred.agent_id, scopes: [MCP_SCOPE] };
  }

  /**
   * RFC 7009: revoking either token of a grant ends the grant (the owner approves again). Unknown tokens are ignored;
   * a token issued to another client is refused and changes nothing (section 2.1).
   */
  async revokeToken(client: OAuthClientInformationFull, request: OAuthTokenRevocationRequest): Promise<void> {
    const grant = await OAuthRecords.grantOfToken(this.dataSource, hashCredential(request.token));
    if (!grant) return;
    if (grant.client_id !== client.client_id) throw new UnauthorizedClientError('The token was not issued to this client.');
    if (await OAuthRecords.revokeGrant(this.dataSource, grant.grant_id)) await this.cache.changed(this.dataSource);
  }

  private async issue(m: Parameters<typeof OAuthRecords.issueTokens>[0], grant: OAuthGrantRow): Promise<OAuthTokens> {
    const { accessTtlS, refreshTtlS } = { ...OAUTH_DEFAULTS, ...this.options.oauth };
    const access = newSecret('tga_');
    const refresh = newSecret('tgr_');
    await OAuthRecords.issueTokens(m, grant, { credentialId: randomUUID(), accessHash: hashCredential(access), accessTtlS, refreshHash: hashCredential(refresh), refreshTtlS });
    return { access_token: access, token_type: 'Bearer', expires_in: accessTtlS, refresh_token: refresh, scope: grant.scopes };
  }

  /** A code that is not live: a replayed one revokes what it granted (OAuth 2.1, section 4.1.3). */
  private async refuseCode(codeHash: string): Promise<never> {
    const replayed = await OAuthRecords.grantOfCodeReplay(this.dataSource, codeHash);
    if (replayed && (await OAuthRecords.revokeGrant(this.dataSource, replayed))) await this.cache.changed(this.dataSource);
    throw new InvalidGrantError('The authorization code is invalid, expired or used.');
  }
}
