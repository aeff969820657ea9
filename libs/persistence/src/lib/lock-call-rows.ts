import { type EntityManager } from 'typeorm';
import { type Column, type RowOf, rowsOf, type Table } from './table';

/**
 * The rows of these calls in a service's call-state table, locked for this transaction, in one statement. A call not
 * seen yet gets its row, with an empty call-life state; a call already there is locked by a no-op update and comes
 * back as it is — after waiting for any transaction that holds it, so a call's facts reaching two replicas at once
 * are folded one after the other, never over each other. Rows are taken in key order, so two batches never wait on
 * each other in a circle. `table` and `names` are the repository's own declaration, never input; the rows are checked against it.
 */
export async function lockCallRows<T extends Table<Record<string, Column>>, K extends keyof T['columns'] & string>(
  m: Pick<EntityManager, 'query'>, table: T, names: readonly K[], intentIds: readonly string[],
): Promise<Map<string, Pick<RowOf<T>, K>>> {
  const ids = [...new Set(intentIds)].sort();
  const rows = rowsOf(table, names, await m.query(
    `INSERT INTO ${table.name} AS t (intent_id, life)
     SELECT id, jsonb_build_object('intentId', id, 'attempts', '{}'::jsonb) FROM unnest($1::uuid[]) AS id ORDER BY id
     ON CONFLICT (intent_id) DO UPDATE SET intent_id = t.intent_id
     RETURNING ${names.map((c) => `t.${c}`).join(', ')}`, [ids]));
  if (!names.includes('intent_id' as K)) throw new Error(`lockCallRows on ${table.name} must return intent_id`);
  return new Map(rows.map((r): [string, Pick<RowOf<T>, K>] => [String((r as Record<string, unknown>)['intent_id']), r]));
}
