import { type EntityManager } from 'typeorm';
import { returnedRows } from './service-data-source';

/**
 * The rows of these calls in a service's call-state table, locked for this transaction, in one statement. A call not
 * seen yet gets its row, with an empty call-life state; a call already there is locked by a no-op update and comes
 * back as it is — after waiting for any transaction that holds it, so a call's facts reaching two replicas at once
 * are folded one after the other, never over each other. Rows are taken in key order, so two batches never wait on
 * each other in a circle. `table` and `columns` are the repository's own constants, never input.
 */
export async function lockCallRows<R extends { intent_id: string }>(m: Pick<EntityManager, 'query'>, table: string, columns: string, intentIds: readonly string[]): Promise<Map<string, R>> {
  const ids = [...new Set(intentIds)].sort();
  const rows = returnedRows<R>(await m.query(
    `INSERT INTO ${table} AS t (intent_id, life)
     SELECT id, jsonb_build_object('intentId', id, 'attempts', '{}'::jsonb) FROM unnest($1::uuid[]) AS id ORDER BY id
     ON CONFLICT (intent_id) DO UPDATE SET intent_id = t.intent_id
     RETURNING ${columns.split(',').map((c) => `t.${c.trim()}`).join(', ')}`, [ids]));
  return new Map(rows.map((r) => [r.intent_id, r]));
}
