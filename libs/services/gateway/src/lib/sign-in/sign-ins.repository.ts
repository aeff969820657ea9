import { type EntityManager } from 'typeorm';
import { col, defineTable, returnedRows, type RowOf, select } from '@tollgate/persistence';
import { MCP_URL } from '../authenticate/identities.repository';

/** `gateway.device_sign_in`: one device's request to sign in, from start to collected (only its poll secret's hash is kept). */
export const DEVICE_SIGN_IN = defineTable('gateway.device_sign_in', {
  request_id: col.uuid().required(),
  poll_hash: col.text().required(),
  user_code: col.text().required(),
  device_name: col.text().required(),
  slug: col.text().required(),
  status: col.text<'pending' | 'approved' | 'collected'>().required(),
  expires_at: col.timestamptz().required(),
  owner_id: col.uuid().nullable(),
  agent_id: col.uuid().nullable(),
  created_at: col.timestamptz().required(),
  decided_at: col.timestamptz().nullable(),
});
export type DeviceSignInRow = RowOf<typeof DEVICE_SIGN_IN>;

/** A request as read with whether it has expired. */
const SIGN_IN_READ = defineTable('(device sign-in, read)', { ...DEVICE_SIGN_IN.columns, expired: col.boolean().required() });

/** `gateway.owner_key`: an owner's key for approving sign-ins (its hash only). */
export const OWNER_KEY = defineTable('gateway.owner_key', {
  key_id: col.uuid().required(),
  owner_id: col.uuid().required(),
  secret_hash: col.text().required(),
  created_at: col.timestamptz().required(),
  revoked_at: col.timestamptz().nullable(),
});

export type OwnerKeyRow = Pick<RowOf<typeof OWNER_KEY>, 'key_id' | 'owner_id' | 'created_at' | 'revoked_at'>;

/** The device flow's statements on `gateway.device_sign_in`, owner keys (`gateway.owner_key`) and the URLs they name. */
type Executor = Pick<EntityManager, 'query'>;

export const SignIns = {

  async urlIsEnabled(m: Executor, slug: string): Promise<boolean> {
    return returnedRows<unknown>(await m.query('SELECT 1 FROM gateway.mcp_url WHERE slug = $1 AND disabled_at IS NULL', [slug])).length > 0;
  },

  /** The owner of the URL with this slug (null for a shared URL); undefined when there is no such URL. */
  async urlOwner(m: Executor, slug: string): Promise<{ owner_id: string | null } | undefined> {
    return (await select(m, MCP_URL, ['owner_id'], 'SELECT owner_id FROM gateway.mcp_url WHERE slug = $1', [slug]))[0];
  },

  async insert(m: Executor, r: Pick<DeviceSignInRow, 'request_id' | 'poll_hash' | 'user_code' | 'device_name' | 'slug' | 'expires_at'>): Promise<void> {
    await m.query(
      'INSERT INTO gateway.device_sign_in (request_id, poll_hash, user_code, device_name, slug, expires_at) VALUES ($1, $2, $3, $4, $5, $6)',
      [r.request_id, r.poll_hash, r.user_code, r.device_name, r.slug, r.expires_at]);
  },

  async find(m: Executor, requestId: string): Promise<(Pick<DeviceSignInRow, 'user_code' | 'device_name' | 'slug' | 'status'> & { expired: boolean }) | undefined> {
    return (await select(m, SIGN_IN_READ, ['user_code', 'device_name', 'slug', 'status', 'expired'],
      'SELECT user_code, device_name, slug, status, expires_at < now() AS expired FROM gateway.device_sign_in WHERE request_id = $1', [requestId]))[0];
  },

  /** The request as its device sees it (by its poll secret's hash). */
  async findForDevice(m: Executor, requestId: string, pollHash: string): Promise<(Pick<DeviceSignInRow, 'status' | 'expires_at'> & { expired: boolean }) | undefined> {
    return (await select(m, SIGN_IN_READ, ['status', 'expires_at', 'expired'],
      'SELECT status, expires_at < now() AS expired, expires_at FROM gateway.device_sign_in WHERE request_id = $1 AND poll_hash = $2', [requestId, pollHash]))[0];
  },

  /** A pending, unexpired request approved for this owner's new agent; false when it was not pending any more. */
  async approve(m: Executor, requestId: string, ownerId: string, agentId: string): Promise<boolean> {
    return returnedRows<unknown>(await m.query(
      `UPDATE gateway.device_sign_in SET status = 'approved', owner_id = $2, agent_id = $3, decided_at = now()
        WHERE request_id = $1 AND status = 'pending' AND expires_at >= now() RETURNING request_id`,
      [requestId, ownerId, agentId])).length > 0;
  },

  /** Marks an approved request collected by its device (once), in the caller's transaction; its agent and URL. */
  async collect(m: Executor, requestId: string, pollHash: string): Promise<{ agent_id: string; slug: string } | undefined> {
    const [row] = await select(m, DEVICE_SIGN_IN, ['agent_id', 'slug'],
      `UPDATE gateway.device_sign_in SET status = 'collected' WHERE request_id = $1 AND poll_hash = $2 AND status = 'approved' RETURNING agent_id, slug`,
      [requestId, pollHash]);
    return row?.agent_id ? { agent_id: row.agent_id, slug: row.slug } : undefined;
  },

  /** The owner a live owner key (by its hash) belongs to. */
  async ownerOfKey(m: Executor, keyHash: string): Promise<string | undefined> {
    return (await select(m, OWNER_KEY, ['owner_id'], 'SELECT owner_id FROM gateway.owner_key WHERE secret_hash = $1 AND revoked_at IS NULL', [keyHash]))[0]?.owner_id;
  },

  /** An owner's keys (never their secrets), newest first. */
  async ownerKeys(m: Executor, ownerId: string): Promise<OwnerKeyRow[]> {
    return select(m, OWNER_KEY, ['key_id', 'owner_id', 'created_at', 'revoked_at'],
      'SELECT key_id, owner_id, created_at, revoked_at FROM gateway.owner_key WHERE owner_id = $1 ORDER BY created_at DESC LIMIT 100', [ownerId]);
  },

  /** Revokes one live key of this owner; false when the owner has no such live key (another owner's key included). */
  async revokeOwnerKey(m: Executor, keyId: string, ownerId: string): Promise<boolean> {
    return returnedRows<unknown>(await m.query(
      'UPDATE gateway.owner_key SET revoked_at = now() WHERE key_id = $1 AND owner_id = $2 AND revoked_at IS NULL RETURNING key_id', [keyId, ownerId])).length > 0;
  },

  /** A new owner key (its hash only) of an existing owner; false when there is no such owner. */
  async insertOwnerKey(m: Executor, keyId: string, ownerId: string, keyHash: string): Promise<boolean> {
    return returnedRows<unknown>(await m.query(
      'INSERT INTO gateway.owner_key (key_id, owner_id, secret_hash) SELECT $1, owner_id, $3 FROM gateway.owner WHERE owner_id = $2 RETURNING key_id',
      [keyId, ownerId, keyHash])).length > 0;
  },
};
