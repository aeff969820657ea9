import type * as MppxCore from 'mppx' with { 'resolution-mode': 'import' };
import { type DataSource, type EntityManager } from 'typeorm';
import { col, defineTable, returnedRows, select } from '@tollgate/persistence';

/** `payment.mpp_replay`: mppx's replay store, one row per key (a claim's `value` is mppx's replay marker). */
export const MPP_REPLAY = defineTable('payment.mpp_replay', {
  key: col.text().required(), value: col.jsonb<unknown>().required(), expires_at: col.timestamptz().nullable(), created_at: col.timestamptz().required(),
});

type Executor = DataSource | EntityManager;
const LIVE = '(expires_at IS NULL OR expires_at > now())';

/**
 * mppx's `Store.AtomicStore` on PostgreSQL (mppx ships none that keeps books): `get` / `put` / `delete`, `update`
 * under a row lock, and `tryClaim` as one INSERT that only an absent or expired key lets through — so of two
 * concurrent claims exactly one wins, in whichever transaction `db` is (a call's, when claimed with its attempt).
 */
export class PgReplayStore implements MppxCore.Store.AtomicStore {
  constructor(private readonly db: Executor) {}

  async get(key: string): Promise<never | null> {
    const [row] = await select(this.db, MPP_REPLAY, ['value'], `SELECT value FROM payment.mpp_replay WHERE key = $1 AND ${LIVE}`, [key]);
    return (row?.value ?? null) as never;
  }

  async put(key: string, value: unknown): Promise<void> {
    await this.db.query(`INSERT INTO payment.mpp_replay (key, value, expires_at) VALUES ($1, $2, $3)
                           ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at`, [key, JSON.stringify(value), expiresOf(value)]);
  }

  async delete(key: string): Promise<void> {
    await this.db.query('DELETE FROM payment.mpp_replay WHERE key = $1', [key]);
  }

  update: MppxCore.Store.Update = async (key, fn) => {
    const run = async (m: EntityManager) => {
      const [row] = await select(m, MPP_REPLAY, ['value'], `SELECT value FROM payment.mpp_replay WHERE key = $1 AND ${LIVE} FOR UPDATE`, [key]);
      const change = fn((row?.value ?? null) as never);
      if (change.op === 'set') await new PgReplayStore(m).put(key, change.value);
      if (change.op === 'delete') await new PgReplayStore(m).delete(key);
      return change.result;
    };
    return 'transaction' in this.db && 'createQueryRunner' in this.db ? this.db.transaction(run) : run(this.db as EntityManager);
  };

  async tryClaim(key: string, expires: number): Promise<boolean> {
    const rows = returnedRows<unknown>(await this.db.query(
      `INSERT INTO payment.mpp_replay (key, value, expires_at) VALUES ($1, $2, to_timestamp($3::double precision / 1000))
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at, created_at = now()
           WHERE payment.mpp_replay.expires_at IS NOT NULL AND payment.mpp_replay.expires_at <= now()
       RETURNING 1`, [key, JSON.stringify({ type: 'mppx:replay', expires }), expires]));
    return rows.length > 0;
  }
}

/** A replay marker's expiry (mppx's `{ type: 'mppx:replay', expires }`); other values keep no expiry. */
function expiresOf(value: unknown): Date | null {
  const e = (value as { expires?: unknown } | null)?.expires;
  return typeof e === 'number' ? new Date(e) : null;
}
