import { type DataSource } from 'typeorm';

/** Holds placed and not yet captured or voided, counted from the partial index `hold_open` (never a table scan). */
export const OPEN_HOLDS_SQL = `SELECT count(*)::int AS n FROM payment.hold WHERE status = 'pending'`;

export async function countOpenHolds(ds: DataSource): Promise<number> {
  return Number(((await ds.query(OPEN_HOLDS_SQL)) as { n: number }[])[0]?.n ?? 0);
}
