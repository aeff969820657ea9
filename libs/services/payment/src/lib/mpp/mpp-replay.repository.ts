import { type EntityManager } from 'typeorm';
import { col, defineTable, returnedRows, select } from '@tollgate/persistence';

/** `payment.mpp_replay`: mppx's replay store, one row per key (a claim's `value` is mppx's replay marker). */
export const MPP_REPLAY = defineTable('payment.mpp_replay', {
  key: col.text().required(), value: col.jsonb<unknown>().required(), expires_at: col.timestamptz().nullable(), created_at: col.timestamptz().required(),
});

type Executor = Pick<EntityManager, 'query'>;
const LIVE = '(expires_at IS NULL OR expires_at > now())';

/** The statements on `payment.mpp_replay`; `PgReplayStore` runs mppx's store on them. */
export const MppReplays = {
  /** A live key's value (null when absent or expired); `lock`: row-locked for this transaction. */
  async get(m: Executor, key: string, lock = false): Promise<unknown> {
    const [row] = await select(m, MPP_REPLAY, ['value'], `SELECT value FROM payment.mpp_replay WHERE key = $1 AND ${LIVE}${lock ? ' FOR UPDATE' : ''}`, [key]);
    return row?.value ?? null;
  },

  async put(m: Executor, key: string, value: unknown): Promise<void> {
    await m.query(`INSERT INTO payment.mpp_replay (key, value, expires_at) VALUES ($1, $2, $3)
                     ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at`, [key, JSON.stringify(value), expiresOf(value)]);
  },

  async delete(m: Executor, key: string): Promise<void> {
    await m.query('DELETE FROM payment.mpp_replay WHERE key = $1', [key]);
  },

  /** One INSERT that only an absent or expired key lets through: of two concurrent claims exactly one wins. */
  async tryClaim(m: Executor, key: string, expires: number): Promise<boolean> {
    const rows = returnedRows<unknown>(await m.query(
      `INSERT INTO payment.mpp_replay (key, value, expires_at) VALUES ($1, $2, to_timestamp($3::double precision / 1000))
         ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value, expires_at = EXCLUDED.expires_at, created_at = now()
           WHERE payment.mpp_replay.expires_at IS NOT NULL AND payment.mpp_replay.expires_at <= now()
       RETURNING 1`, [key, JSON.stringify({ type: 'mppx:replay', expires }), expires]));
    return rows.length > 0;
  },
};

/** A replay marker's expiry (mppx's `{ type: 'mppx:replay', expires }`); other values keep no expiry. */
function expiresOf(value: unknown): Date | null {
  const e = (value as { expires?: unknown } | null)?.expires;
  return typeof e === 'number' ? new Date(e) : null;
}
