import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { hashCredential } from './credential-hash';
import { GATEWAY } from '../gateway.constants';
import { type UrlProfile } from '../catalog/catalog-access';
import { bearerSecret } from '@tollgate/http';
import { type LimitName, RateLimits } from '../rate-limit/rate-limits.service';
import { IdentityCache } from './identity-cache.service';
import { Identities, type McpUrlRow } from './identities.repository';

/** Who is calling, derived only from the credential and the URL (C2). */
export interface CallerIdentity {
  ownerId: string;
  agentId: string;
  credentialId: string;
  mcpUrlId: string;
  slug: string;
}

export type AuthOutcome =
  | { ok: true; identity: CallerIdentity; profile: UrlProfile }
  | { ok: false; code: 'MCP_URL_NOT_FOUND' | 'MCP_CREDENTIAL_INVALID' }
  | { ok: false; code: 'MCP_AUTH_RATE_LIMITED'; retryAfterMs: number };

export function profileOf(u: McpUrlRow): UrlProfile {
  return {
    mcpUrlId: u.mcp_url_id, slug: u.slug, ownerId: u.owner_id, mode: u.discovery_mode, autoThreshold: u.auto_threshold,
    pinned: u.pinned_tools, scopeTools: u.scope_tools, scopeCategories: u.scope_categories, providerRules: u.provider_rules,
  };
}

/**
 * Resolves the URL and the bearer credential on every request (stateless, so a
 * revoked credential stops working at once). The credential is checked first:
 * a valid one is never refused because of someone else's failures behind the
 * same address. Failed attempts are counted per client address and
 * per presented secret, across URLs and gateway instances; once either
 * allowance is used up, further failures answer MCP_AUTH_RATE_LIMITED.
 */
@Injectable()
export class AuthenticateUseCase {
  constructor(
    @InjectDataSource(GATEWAY) private readonly dataSource: DataSource,
    private readonly limits: RateLimits,
    private readonly cache: IdentityCache,
  ) {}

  async execute(slug: string, authorization: string | undefined, clientAddress: string): Promise<AuthOutcome> {
    const lower = slug.toLowerCase();
    const url = await this.cache.get(`url:${lower}`, () => Identities.enabledUrl(this.dataSource, lower));
    if (!url) return { ok: false, code: 'MCP_URL_NOT_FOUND' };
    const secret = bearerSecret(authorization);
    const hash = secret ? hashCredential(secret) : undefined;
    const cred = hash ? await this.cache.get(`cred:${hash}`, () => Identities.liveCredential(this.dataSource, hash)) : undefined;
    // An OAuth access token is good for the one URL its grant names (RFC 8707); elsewhere it is no credential at all.
    if (!cred || (cred.mcp_url_id && cred.mcp_url_id !== url.mcp_url_id)) return this.failed(clientAddress, secret);
    // A private URL exists only for its owner's agents: to anyone else it is not there.
    if (url.owner_id && url.owner_id !== cred.owner_id) return { ok: false, code: 'MCP_URL_NOT_FOUND' };
    return {
      ok: true,
      identity: { ownerId: cred.owner_id, agentId: cred.agent_id, credentialId: cred.credential_id, mcpUrlId: url.mcp_url_id, slug: url.slug },
      profile: profileOf(url),
    };
  }

  /** One failed attempt: limited once the address or the presented secret has used up its allowance. */
  private async failed(clientAddress: string, secret: string | undefined): Promise<AuthOutcome> {
    const subjects: [LimitName, string][] = [['authFailures', `addr:${clientAddress}`]];
    if (secret) subjects.push(['authFailuresPerSecret', `secret:${hashCredential(secret)}`]);
    for (const [limit, subject] of subjects) {
      const blocked = await this.limits.exhausted(limit, subject);
      if (!blocked.ok) return { ok: false, code: 'MCP_AUTH_RATE_LIMITED', retryAfterMs: blocked.retryAfterMs };
    }
    await Promise.all(subjects.map(([limit, subject]) => this.limits.consume(limit, subject)));
    return { ok: false, code: 'MCP_CREDENTIAL_INVALID' };
  }
}
