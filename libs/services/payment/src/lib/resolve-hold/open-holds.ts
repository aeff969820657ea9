import { type DataSource } from 'typeorm';
import { col, defineTable, select } from '@tollgate/persistence';

/** Holds whose call is not terminal yet (`open`, derived from the hold's state), counted from the partial index `hold_open`. */
export const OPEN_HOLDS_SQL = `SELECT count(*)::int AS n FROM payment.hold WHERE open`;

const COUNT = defineTable('(count)', { n: col.integer().required() });

export async function countOpenHolds(ds: DataSource): Promise<number> {
  return (await select(ds, COUNT, ['n'], OPEN_HOLDS_SQL))[0]?.n ?? 0;
}
