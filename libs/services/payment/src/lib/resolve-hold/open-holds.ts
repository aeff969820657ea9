import { type DataSource } from 'typeorm';

/** Holds whose call is not terminal yet (`open`, derived from the hold's state), counted from the partial index `hold_open`. */
export const OPEN_HOLDS_SQL = `SELECT count(*)::int AS n FROM payment.hold WHERE open`;

export async function countOpenHolds(ds: DataSource): Promise<number> {
  return Number(((await ds.query(OPEN_HOLDS_SQL)) as { n: number }[])[0]?.n ?? 0);
}
