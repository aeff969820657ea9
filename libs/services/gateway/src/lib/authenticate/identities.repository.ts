import { type EntityManager } from 'typeorm';
import { col, defineTable, returnedRows, type RowOf, select } from '@tollgate/persistence';
import { type UrlProfile } from '../catalog/catalog-access';

/** `gateway.mcp_url`: one row per MCP URL an agent connects to, with the profile it serves. */
/** `gateway.owner`: who pays (a wallet's holder). */
export const OWNER = defineTable('gateway.owner', { owner_id: col.uuid().required(), name: col.text().required(), created_at: col.timestamptz().required() });
/** `gateway.agent`: an owner's agent, whose credentials call tools. */
export const AGENT = defineTable('gateway.agent', { agent_id: col.uuid().required(), owner_id: col.uuid().required(), name: col.text().required(), created_at: col.timestamptz().required() });

export const MCP_URL = defineTable('gateway.mcp_url', {
  mcp_url_id: col.uuid().required(),
  slug: col.text().required(),
  owner_id: col.uuid().nullable(),
  discovery_mode: col.text<UrlProfile['mode']>().required(),
  created_at: col.timestamptz().required(),
  disabled_at: col.timestamptz().nullable(),
  auto_threshold: col.integer().required(),
  pinned_tools: col.jsonb<string[]>().required(),
  scope_tools: col.jsonb<string[]>().nullable(),
  scope_categories: col.jsonb<string[]>().nullable(),
  provider_rules: col.jsonb<NonNullable<UrlProfile['providerRules']>>().nullable(),
});
export type McpUrlRow = RowOf<typeof MCP_URL>;

/** `gateway.credential`: an agent's bearer credential, kept as its secret's hash. */
export const CREDENTIAL = defineTable('gateway.credential', {
  credential_id: col.uuid().required(),
  agent_id: col.uuid().required(),
  secret_hash: col.text().required(),
  created_at: col.timestamptz().required(),
  revoked_at: col.timestamptz().nullable(),
  /** An OAuth access token: the grant it came from, the one URL it is good for, and when it expires. */
  grant_id: col.uuid().nullable(),
  mcp_url_id: col.uuid().nullable(),
  expires_at: col.timestamptz().nullable(),
});

/** A live credential with its agent's owner (`gateway.agent`). */
const LIVE_CREDENTIAL = defineTable('(live credential)', { ...CREDENTIAL.columns, owner_id: col.uuid().required() });
export type CredentialRow = Pick<RowOf<typeof LIVE_CREDENTIAL>, 'credential_id' | 'agent_id' | 'owner_id' | 'mcp_url_id'>;

const URL_COLUMNS = Object.keys(MCP_URL.columns) as (keyof typeof MCP_URL.columns)[];

/** The reads that authenticate every MCP request (C2): the URL by its slug, the credential by its secret's hash. */
type Executor = Pick<EntityManager, 'query'>;

export const Identities = {

  /** An enabled URL by its (lower-case) slug. */
  async enabledUrl(m: Executor, slug: string): Promise<McpUrlRow | undefined> {
    const [row] = await select(m, MCP_URL, URL_COLUMNS, 'SELECT * FROM gateway.mcp_url WHERE slug = $1 AND disabled_at IS NULL', [slug]);
    return row;
  },

  /** Whether the owner exists. */
  async ownerExists(m: Executor, ownerId: string): Promise<boolean> {
    return returnedRows<unknown>(await m.query('SELECT 1 FROM gateway.owner WHERE owner_id = $1', [ownerId])).length > 0;
  },

  /** The id of the URL with this slug, enabled or not. */
  async urlIdOf(m: Executor, slug: string): Promise<string | undefined> {
    const [row] = await select(m, MCP_URL, ['mcp_url_id'], 'SELECT mcp_url_id FROM gateway.mcp_url WHERE slug = $1', [slug]);
    return row?.mcp_url_id;
  },

  /** The credential whose secret hashes to `hash`, unless revoked. */
  async liveCredential(m: Executor, hash: string): Promise<CredentialRow | undefined> {
    const [row] = await select(m, LIVE_CREDENTIAL, ['credential_id', 'agent_id', 'owner_id', 'mcp_url_id'],
      `SELECT c.credential_id, c.agent_id, a.owner_id, c.mcp_url_id FROM gateway.credential c JOIN gateway.agent a ON a.agent_id = c.agent_id
        WHERE c.secret_hash = $1 AND c.revoked_at IS NULL AND (c.expires_at IS NULL OR c.expires_at > now())`, [hash]);
    return row;
  },

  async insertOwner(m: Executor, ownerId: string, name: string): Promise<void> {
    await m.query('INSERT INTO gateway.owner (owner_id, name) VALUES ($1, $2)', [ownerId, name]);
  },

  /** An agent of an existing owner; false when there is no such owner. */
  async insertAgent(m: Executor, agentId: string, ownerId: string, name: string): Promise<boolean> {
    return returnedRows<unknown>(await m.query(
      'INSERT INTO gateway.agent (agent_id, owner_id, name) SELECT $1, owner_id, $3 FROM gateway.owner WHERE owner_id = $2 RETURNING agent_id',
      [agentId, ownerId, name])).length > 0;
  },

  /**
   * A credential of an existing agent (its secret's hash only); false when there is no such agent. `slug` binds it to
   * that one MCP URL (a device's sign-in), otherwise every URL its agent may use.
   */
  async insertCredential(m: Executor, credentialId: string, agentId: string, secretHash: string, slug?: string): Promise<boolean> {
    return returnedRows<unknown>(await m.query(
      `INSERT INTO gateway.credential (credential_id, agent_id, secret_hash, mcp_url_id)
       SELECT $1, agent_id, $3, (SELECT mcp_url_id FROM gateway.mcp_url WHERE slug = $4) FROM gateway.agent WHERE agent_id = $2 RETURNING credential_id`,
      [credentialId, agentId, secretHash, slug ?? null])).length > 0;
  },

  /** Revokes a credential (once: a second revocation keeps the first time); undefined when there is no such credential. */
  async revokeCredential(m: Executor, credentialId: string): Promise<Date | undefined> {
    const [row] = await select(m, CREDENTIAL, ['revoked_at'],
      'UPDATE gateway.credential SET revoked_at = COALESCE(revoked_at, now()) WHERE credential_id = $1 RETURNING revoked_at', [credentialId]);
    return row?.revoked_at ?? undefined;
  },

  /** A new URL; PostgreSQL's unique (23505) and foreign-key (23503) violations reach the caller. */
  async insertUrl(m: Executor, mcpUrlId: string, slug: string, ownerId: string | null): Promise<void> {
    await m.query('INSERT INTO gateway.mcp_url (mcp_url_id, slug, owner_id) VALUES ($1, $2, $3)', [mcpUrlId, slug, ownerId]);
  },

  /** Disables a URL (once); undefined when there is no such URL. */
  async disableUrl(m: Executor, slug: string): Promise<Date | undefined> {
    const [row] = await select(m, MCP_URL, ['disabled_at'],
      'UPDATE gateway.mcp_url SET disabled_at = COALESCE(disabled_at, now()) WHERE slug = $1 RETURNING disabled_at', [slug]);
    return row?.disabled_at ?? undefined;
  },

  /** Sets these profile columns of a URL (values as stored: JSON text for the jsonb ones); false when there is no such URL. */
  async updateUrlProfile(m: Executor, slug: string, columns: Partial<Record<UrlProfileColumn, unknown>>): Promise<boolean> {
    const names = (Object.keys(columns) as UrlProfileColumn[]).filter((c) => URL_PROFILE_COLUMNS.includes(c));
    const sets = names.map((c, i) => `${c} = $${i + 2}`);
    return returnedRows<unknown>(await m.query(`UPDATE gateway.mcp_url SET ${sets.join(', ')} WHERE slug = $1 RETURNING slug`, [slug, ...names.map((c) => columns[c])])).length > 0;
  },
};

/** The columns of a URL's profile an admin may change. */
const URL_PROFILE_COLUMNS = ['discovery_mode', 'auto_threshold', 'pinned_tools', 'scope_tools', 'scope_categories', 'provider_rules'] as const;
export type UrlProfileColumn = (typeof URL_PROFILE_COLUMNS)[number];
