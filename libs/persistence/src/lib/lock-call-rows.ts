import { type EntityManager } from 'typeorm';

/**
 * The rows of these calls in a service's call-state table, locked for this transaction. A call not seen yet gets its
 * row first, with an empty call-life state (in key order, so two batches never wait on each other in a circle): a
 * call's facts may reach two replicas at once, and each must evolve the other's state, never overwrite it.
 * `table` and `columns` are the repository's own constants, never input.
 */
export async function lockCallRows<R extends { intent_id: string }>(m: Pick<EntityManager, 'query'>, table: string, columns: string, intentIds: readonly string[]): Promise<Map<string, R>> {
  const ids = [...intentIds].sort();
  await m.query(
    `INSERT INTO ${table} (intent_id, life) SELECT id, jsonb_build_object('intentId', id, 'attempts', '{}'::jsonb) FROM unnest($1::uuid[]) AS id
     ON CONFLICT (intent_id) DO NOTHING`, [ids]);
  const rows = (await m.query(`SELECT ${columns} FROM ${table} WHERE intent_id = ANY($1::uuid[]) ORDER BY intent_id FOR UPDATE`, [ids])) as R[];
  return new Map(rows.map((r) => [r.intent_id, r]));
}
