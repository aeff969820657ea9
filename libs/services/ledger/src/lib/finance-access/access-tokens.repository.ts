import { type EntityManager } from 'typeorm';
import { col, defineTable, returnedRows, type RowOf, select } from '@tollgate/persistence';

/** `ledger.access_token`: finance and operator tokens, stored as the hash of their secret. */
export const ACCESS_TOKEN = defineTable('ledger.access_token', {
  token_id: col.uuid().required(),
  secret_hash: col.text().required(),
  role: col.text<'finance' | 'operator'>().required(),
  owner_id: col.text().nullable(),
  label: col.text().required(),
  created_at: col.timestamptz().required(),
  revoked_at: col.timestamptz().nullable(),
});
export type AccessTokenRow = RowOf<typeof ACCESS_TOKEN>;

type Executor = Pick<EntityManager, 'query'>;

/** Every statement on `ledger.access_token`. */
export const AccessTokens = {
  async insert(db: Executor, t: Pick<AccessTokenRow, 'token_id' | 'secret_hash' | 'role' | 'owner_id' | 'label'>): Promise<void> {
    await db.query('INSERT INTO ledger.access_token (token_id, secret_hash, role, owner_id, label) VALUES ($1, $2, $3, $4, $5)',
      [t.token_id, t.secret_hash, t.role, t.owner_id, t.label]);
  },

  /** Revokes a live token; false when there was none to revoke. */
  async revoke(db: Executor, tokenId: string): Promise<boolean> {
    const rows = returnedRows<unknown>(await db.query('UPDATE ledger.access_token SET revoked_at = now() WHERE token_id = $1 AND revoked_at IS NULL RETURNING token_id', [tokenId]));
    return rows.length > 0;
  },

  /** Every token ever issued (never their secrets), oldest first. */
  async all(db: Executor): Promise<Omit<AccessTokenRow, 'secret_hash'>[]> {
    return select(db, ACCESS_TOKEN, ['token_id', 'role', 'owner_id', 'label', 'created_at', 'revoked_at'], 'SELECT token_id, role, owner_id, label, created_at, revoked_at FROM ledger.access_token ORDER BY created_at');
  },

  /** The live token whose secret hashes to `secretHash`. */
  async live(db: Executor, secretHash: string): Promise<Pick<AccessTokenRow, 'token_id' | 'role' | 'owner_id'> | undefined> {
    return (await select(db, ACCESS_TOKEN, ['token_id', 'role', 'owner_id'], 'SELECT token_id, role, owner_id FROM ledger.access_token WHERE secret_hash = $1 AND revoked_at IS NULL', [secretHash]))[0];
  },
};
