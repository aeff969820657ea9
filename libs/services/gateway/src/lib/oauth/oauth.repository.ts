import { type EntityManager } from 'typeorm';
import { col, defineTable, returnedRows, type RowOf, select } from '@tollgate/persistence';

/** `gateway.oauth_client`: a client registered dynamically (RFC 7591), with the metadata it registered. */
export const OAUTH_CLIENT = defineTable('gateway.oauth_client', {
  client_id: col.text().required(),
  metadata: col.jsonb<Record<string, unknown>>().required(),
  created_at: col.timestamptz().required(),
});

/** `gateway.oauth_grant`: one client acting as one agent of one owner on one MCP URL, as the owner approved it. */
export const OAUTH_GRANT = defineTable('gateway.oauth_grant', {
  grant_id: col.uuid().required(),
  client_id: col.text().required(),
  client_name: col.text().required(),
  owner_id: col.uuid().required(),
  agent_id: col.uuid().required(),
  mcp_url_id: col.uuid().required(),
  scopes: col.text().required(),
  refresh_hash: col.text().nullable(),
  refresh_expires_at: col.timestamptz().nullable(),
  /** The refresh token this grant rotated away from: presented again, it reveals a copied token (the grant is revoked). */
  previous_refresh_hash: col.text().nullable(),
  created_at: col.timestamptz().required(),
  refreshed_at: col.timestamptz().nullable(),
  revoked_at: col.timestamptz().nullable(),
});
export type OAuthGrantRow = RowOf<typeof OAUTH_GRANT>;

/** `gateway.oauth_request`: an authorization request waiting for the owner's consent, then its one-time code. */
export const OAUTH_REQUEST = defineTable('gateway.oauth_request', {
  request_id: col.uuid().required(),
  client_id: col.text().required(),
  client_name: col.text().required(),
  redirect_uri: col.text().required(),
  code_challenge: col.text().required(),
  state: col.text().nullable(),
  scopes: col.text().required(),
  resource: col.text().required(),
  issuer: col.text().required(),
  mcp_url_id: col.uuid().required(),
  expires_at: col.timestamptz().required(),
  code_hash: col.text().nullable(),
  grant_id: col.uuid().nullable(),
  decided_at: col.timestamptz().nullable(),
  redeemed_at: col.timestamptz().nullable(),
  created_at: col.timestamptz().required(),
});
export type OAuthRequestRow = RowOf<typeof OAUTH_REQUEST>;
export type NewOAuthRequest = Omit<OAuthRequestRow, 'code_hash' | 'grant_id' | 'decided_at' | 'redeemed_at' | 'created_at'>;

const REQUEST_READ = defineTable('(oauth request, read)', { ...OAUTH_REQUEST.columns, expired: col.boolean().required(), slug: col.text().required() });
export type OAuthRequestRead = RowOf<typeof REQUEST_READ>;
const GRANT_COLUMNS = Object.keys(OAUTH_GRANT.columns) as (keyof OAuthGrantRow)[];
const LISTED_GRANT = defineTable('(oauth grant, listed)', { ...OAUTH_GRANT.columns, slug: col.text().required(), live_tokens: col.integer().required() });
export type ListedGrant = RowOf<typeof LISTED_GRANT>;

/** Every statement of the OAuth sign-in: clients, requests with their codes, grants with their refresh and access tokens. */
type Executor = Pick<EntityManager, 'query'>;

export const OAuthRecords = {

  async registeredClient(m: Executor, clientId: string): Promise<Record<string, unknown> | undefined> {
    const [row] = await select(m, OAUTH_CLIENT, ['metadata'], 'SELECT metadata FROM gateway.oauth_client WHERE client_id = $1', [clientId]);
    return row?.metadata;
  },

  async registerClient(m: Executor, clientId: string, metadata: Record<string, unknown>): Promise<void> {
    await m.query('INSERT INTO gateway.oauth_client (client_id, metadata) VALUES ($1, $2)', [clientId, JSON.stringify(metadata)]);
  },

  async insertRequest(m: Executor, r: NewOAuthRequest): Promise<void> {
    await m.query(
      `INSERT INTO gateway.oauth_request (request_id, client_id, client_name, redirect_uri, code_challenge, state, scopes, resource, issuer, mcp_url_id, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [r.request_id, r.client_id, r.client_name, r.redirect_uri, r.code_challenge, r.state, r.scopes, r.resource, r.issuer, r.mcp_url_id, r.expires_at]);
  },

  /** A request with its URL's slug and whether it has expired. */
  async request(m: Executor, requestId: string): Promise<OAuthRequestRead | undefined> {
    const [row] = await select(m, REQUEST_READ, [...(Object.keys(OAUTH_REQUEST.columns) as (keyof OAuthRequestRow)[]), 'expired', 'slug'],
      `SELECT r.*, r.expires_at <= now() AS expired, u.slug FROM gateway.oauth_request r JOIN gateway.mcp_url u USING (mcp_url_id) WHERE r.request_id = $1`, [requestId]);
    return row;
  },

  /** The owner's decision, once: the grant and the request's code (hashed) in one transaction; false when decided before. */
  async approve(m: EntityManager, requestId: string, grant: Pick<OAuthGrantRow, 'grant_id' | 'client_id' | 'client_name' | 'owner_id' | 'agent_id' | 'mcp_url_id' | 'scopes'>, codeHash: string): Promise<boolean> {
    await m.query(
      `INSERT INTO gateway.oauth_grant (grant_id, client_id, client_name, owner_id, agent_id, mcp_url_id, scopes) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [grant.grant_id, grant.client_id, grant.client_name, grant.owner_id, grant.agent_id, grant.mcp_url_id, grant.scopes]);
    return returnedRows<unknown>(await m.query(
      `UPDATE gateway.oauth_request SET code_hash = $2, grant_id = $3, decided_at = now(), expires_at = now() + interval '60 seconds'
        WHERE request_id = $1 AND decided_at IS NULL AND expires_at > now() RETURNING request_id`, [requestId, codeHash, grant.grant_id])).length > 0;
  },

  /** A denied request ends (its code never exists). */
  async deny(m: Executor, requestId: string): Promise<boolean> {
    return returnedRows<unknown>(await m.query(
      'UPDATE gateway.oauth_request SET decided_at = now() WHERE request_id = $1 AND decided_at IS NULL RETURNING request_id', [requestId])).length > 0;
  },

  /** The live code's request (approved, unredeemed, unexpired) — for PKCE's challenge and the exchange. */
  async requestOfCode(m: Executor, codeHash: string): Promise<OAuthRequestRow | undefined> {
    const [row] = await select(m, OAUTH_REQUEST, Object.keys(OAUTH_REQUEST.columns) as (keyof OAuthRequestRow)[],
      'SELECT * FROM gateway.oauth_request WHERE code_hash = $1 AND redeemed_at IS NULL AND expires_at > now() AND grant_id IS NOT NULL', [codeHash]);
    return row;
  },

  /** Redeems a code once; a second redemption (a replayed code) revokes the grant it made, as OAuth 2.1 asks. */
  async redeem(m: EntityManager, codeHash: string): Promise<string | undefined> {
    const [row] = await select(m, OAUTH_REQUEST, ['grant_id'],
      'UPDATE gateway.oauth_request SET redeemed_at = now() WHERE code_hash = $1 AND redeemed_at IS NULL AND expires_at > now() RETURNING grant_id', [codeHash]);
    return row?.grant_id ?? undefined;
  },

  async grantOfCodeReplay(m: Executor, codeHash: string): Promise<string | undefined> {
    const [row] = await select(m, OAUTH_REQUEST, ['grant_id'], 'SELECT grant_id FROM gateway.oauth_request WHERE code_hash = $1 AND redeemed_at IS NOT NULL', [codeHash]);
    return row?.grant_id ?? undefined;
  },

  /** A live grant by its current refresh token, locked for the rotation. */
  async grantOfRefresh(m: EntityManager, refreshHash: string): Promise<OAuthGrantRow | undefined> {
    const [row] = await select(m, OAUTH_GRANT, GRANT_COLUMNS,
      'SELECT * FROM gateway.oauth_grant WHERE refresh_hash = $1 AND revoked_at IS NULL AND refresh_expires_at > now() FOR UPDATE', [refreshHash]);
    return row;
  },

  async liveGrant(m: EntityManager, grantId: string): Promise<OAuthGrantRow | undefined> {
    const [row] = await select(m, OAUTH_GRANT, GRANT_COLUMNS, 'SELECT * FROM gateway.oauth_grant WHERE grant_id = $1 AND revoked_at IS NULL', [grantId]);
    return row;
  },

  /** The grant's new refresh token (the old one stops working) and a new access token: a credential of its agent bound to its URL. */
  async issueTokens(m: EntityManager, g: OAuthGrantRow, t: { credentialId: string; accessHash: string; accessTtlS: number; refreshHash: string; refreshTtlS: number }): Promise<void> {
    await m.query(
      `UPDATE gateway.oauth_grant SET previous_refresh_hash = refresh_hash, refresh_hash = $2, refresh_expires_at = now() + ($3::int * interval '1 second'), refreshed_at = now()
        WHERE grant_id = $1`,
      [g.grant_id, t.refreshHash, t.refreshTtlS]);
    await m.query(
      `INSERT INTO gateway.credential (credential_id, agent_id, secret_hash, grant_id, mcp_url_id, expires_at)
       VALUES ($1, $2, $3, $4, $5, now() + ($6::int * interval '1 second'))`,
      [t.credentialId, g.agent_id, t.accessHash, g.grant_id, g.mcp_url_id, t.accessTtlS]);
  },

  /** The live grant whose previous (rotated) refresh token hashes to `hash`: that token is being reused. */
  async grantOfRotatedRefresh(m: Executor, refreshHash: string): Promise<string | undefined> {
    const [row] = await select(m, OAUTH_GRANT, ['grant_id'],
      'SELECT grant_id FROM gateway.oauth_grant WHERE previous_refresh_hash = $1 AND revoked_at IS NULL', [refreshHash]);
    return row?.grant_id;
  },

  /** The grant (and its client) whose token (access or refresh) hashes to `hash`, if any. */
  async grantOfToken(m: Executor, hash: string): Promise<Pick<OAuthGrantRow, 'grant_id' | 'client_id'> | undefined> {
    const [row] = await select(m, OAUTH_GRANT, ['grant_id', 'client_id'],
      `SELECT grant_id, client_id FROM gateway.oauth_grant WHERE grant_id = (
         SELECT grant_id FROM gateway.oauth_grant WHERE refresh_hash = $1
         UNION ALL SELECT grant_id FROM gateway.credential WHERE secret_hash = $1 AND grant_id IS NOT NULL LIMIT 1)`, [hash]);
    return row;
  },

  /** Revokes a grant and every access token it issued; `ownerId` limits it to that owner's grants. False: no such live grant. */
  async revokeGrant(m: Executor, grantId: string, ownerId?: string): Promise<boolean> {
    // One statement: only a grant this caller may revoke loses its tokens (a refused attempt changes nothing).
    return returnedRows<unknown>(await m.query(
      `WITH g AS (UPDATE gateway.oauth_grant SET revoked_at = now(), refresh_hash = NULL, previous_refresh_hash = NULL
                   WHERE grant_id = $1 AND revoked_at IS NULL AND ($2::uuid IS NULL OR owner_id = $2) RETURNING grant_id),
            c AS (UPDATE gateway.credential SET revoked_at = now() WHERE grant_id IN (SELECT grant_id FROM g) AND revoked_at IS NULL)
       SELECT grant_id FROM g`,
      [grantId, ownerId ?? null])).length > 0;
  },

  /** Grants, newest first (at most 500), with their URL and how many of their access tokens are live. */
  async listGrants(m: Executor, ownerId?: string): Promise<ListedGrant[]> {
    return select(m, LISTED_GRANT, [...GRANT_COLUMNS, 'slug', 'live_tokens'],
      `SELECT g.*, u.slug, (SELECT count(*)::int FROM gateway.credential c WHERE c.grant_id = g.grant_id AND c.revoked_at IS NULL AND c.expires_at > now()) AS live_tokens
         FROM gateway.oauth_grant g JOIN gateway.mcp_url u USING (mcp_url_id)
        WHERE ($1::uuid IS NULL OR g.owner_id = $1) ORDER BY g.created_at DESC LIMIT 500`, [ownerId ?? null]);
  },
};
