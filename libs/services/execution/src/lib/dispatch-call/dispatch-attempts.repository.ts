import { type EntityManager } from 'typeorm';
import { col, defineTable, returnedRows, type RowOf } from '@tollgate/persistence';

/** `execution.dispatch_attempt`: one attempt to send a call to one binding (B4: written before the request leaves). */
export const DISPATCH_ATTEMPT = defineTable('execution.dispatch_attempt', {
  intent_id: col.uuid().required(),
  attempt: col.integer().required(),
  binding_id: col.text().required(),
  provider_id: col.text().required(),
  status: col.text<'dispatched' | 'result_received' | 'outcome_unknown' | 'failed'>().required(),
  dispatched_at: col.timestamptz().required(),
  completed_at: col.timestamptz().nullable(),
});
export type DispatchAttemptRow = RowOf<typeof DISPATCH_ATTEMPT>;

/** `execution.reconciliation`: a call whose outcome is unknown, asked again by operation key until resolved. */
export const RECONCILIATION = defineTable('execution.reconciliation', {
  intent_id: col.uuid().required(),
  attempt: col.integer().required(),
  status: col.text<'open' | 'resolved'>().required(),
  reason: col.text().required(),
  tries: col.integer().required(),
  last_error: col.text().nullable(),
  opened_at: col.timestamptz().required(),
  resolved_at: col.timestamptz().nullable(),
  resolution: col.jsonb<Record<string, unknown>>().nullable(),
});
export type ReconciliationRow = RowOf<typeof RECONCILIATION>;

type Executor = Pick<EntityManager, 'query'>;

/** The statements of the dispatch path on `execution.dispatch_attempt` and `execution.reconciliation`. */
export const DispatchAttempts = {
  /** The attempt, recorded as dispatched (its CallDispatched is appended in the same transaction). */
  async record(m: Executor, a: Pick<DispatchAttemptRow, 'intent_id' | 'attempt' | 'binding_id' | 'provider_id'>): Promise<void> {
    await m.query(
      `INSERT INTO execution.dispatch_attempt (intent_id, attempt, binding_id, provider_id, status) VALUES ($1, $2, $3, $4, 'dispatched')`,
      [a.intent_id, a.attempt, a.binding_id, a.provider_id],
    );
  },

  /** Moves an attempt out of `dispatched`, once: false when it had moved already (another worker recorded the outcome). */
  async complete(m: Executor, intentId: string, attempt: number, status: Exclude<DispatchAttemptRow['status'], 'dispatched'>): Promise<boolean> {
    const updated = returnedRows(await m.query(
      `UPDATE execution.dispatch_attempt SET status = $3, completed_at = now() WHERE intent_id = $1 AND attempt = $2 AND status = 'dispatched' RETURNING 1`,
      [intentId, attempt, status],
    ));
    return updated.length === 1;
  },

  /** An unknown outcome to reconcile (one per call: a second opening changes nothing). */
  async openReconciliation(m: Executor, intentId: string, attempt: number, reason: string): Promise<void> {
    await m.query('INSERT INTO execution.reconciliation (intent_id, attempt, reason) VALUES ($1, $2, $3) ON CONFLICT (intent_id) DO NOTHING', [intentId, attempt, reason]);
  },
};
