import { type EntityManager } from 'typeorm';
import { type ToolBindingDto } from '@tollgate/contracts';
import { returnedRows } from '@tollgate/persistence';
import { type ReadBackSpec } from '../dispatch-call/call-policy';
import { type DispatchAttemptRow, type ReconciliationRow } from '../dispatch-call/dispatch-attempts.repository';

type Executor = Pick<EntityManager, 'query'>;

/** An attempt still `dispatched` long past its call's deadline: its process died mid-call. */
export type StalledAttempt = Pick<DispatchAttemptRow, 'intent_id' | 'attempt' | 'provider_id'>;

/** An open case with what the reconciler needs to ask the provider again: the attempt, the request, the tool's read-back. */
export interface OpenCase {
  intent_id: string;
  attempt: number;
  reason: string;
  attempt_status: 'outcome_unknown' | 'result_received' | 'dispatched';
  binding_id: string;
  arguments: Record<string, unknown>;
  operation_key: string | null;
  owner_id: string | null;
  agent_id: string | null;
  mcp_url_id: string | null;
  kind: 'read' | 'write' | null;
  read_back: ReadBackSpec | null;
  bindings: ToolBindingDto[] | null;
}

/** A case as the ops CLI lists it (camelCase, as the API answers). */
export type ListedCase = Record<string, unknown>;

/** The reconciler's statements on `execution.reconciliation`, with the attempts and requests they join. */
export const Reconciliations = {
  /** Attempts still dispatched `graceS` seconds past their deadline (the partial index `dispatch_attempt_in_flight`). */
  async stalledAttempts(db: Executor, graceS: number): Promise<StalledAttempt[]> {
    return (await db.query(
      `SELECT a.intent_id, a.attempt, a.provider_id FROM execution.dispatch_attempt a JOIN execution.pending_call p ON p.intent_id = a.intent_id
        WHERE a.status = 'dispatched' AND p.deadline_at < now() - make_interval(secs => $1)`, [graceS])) as StalledAttempt[];
  },

  /** The oldest open cases, at most `limit`. */
  async openCases(db: Executor, limit: number): Promise<OpenCase[]> {
    return (await db.query(
      `SELECT r.intent_id, r.attempt, r.reason, a.status AS attempt_status, a.binding_id, p.arguments, p.operation_key, p.owner_id, p.agent_id, p.mcp_url_id,
              t.kind, t.read_back, t.bindings
         FROM execution.reconciliation r
         JOIN execution.dispatch_attempt a ON a.intent_id = r.intent_id AND a.attempt = r.attempt
         JOIN execution.pending_call p ON p.intent_id = r.intent_id
         LEFT JOIN execution.tool_binding t ON t.tool_id = p.tool_id
        WHERE r.status = 'open' ORDER BY r.opened_at LIMIT $1`, [limit])) as OpenCase[];
  },

  /** One more try counted for a case. */
  async countTry(db: Executor, intentId: string): Promise<void> {
    await db.query('UPDATE execution.reconciliation SET tries = tries + 1 WHERE intent_id = $1', [intentId]);
  },

  /** Why the last try could not decide. */
  async noteError(db: Executor, intentId: string, error: string): Promise<void> {
    await db.query('UPDATE execution.reconciliation SET last_error = $2 WHERE intent_id = $1', [intentId, error]);
  },

  /** The open case of a call with its attempt's status and provider, or undefined when none is open. */
  async openCaseOf(m: Executor, intentId: string): Promise<{ attempt: number; attempt_status: string; provider_id: string } | undefined> {
    const rows = (await m.query(
      `SELECT r.attempt, a.status AS attempt_status, a.provider_id FROM execution.reconciliation r JOIN execution.dispatch_attempt a ON a.intent_id = r.intent_id AND a.attempt = r.attempt
        WHERE r.intent_id = $1 AND r.status = 'open'`, [intentId])) as { attempt: number; attempt_status: string; provider_id: string }[];
    return rows[0];
  },

  /** Records the decision, once: false when the case was not open (another decision came first). */
  async claim(m: Executor, intentId: string, resolution: object): Promise<boolean> {
    const rows = returnedRows(await m.query(
      `UPDATE execution.reconciliation SET status = 'resolved', resolved_at = now(), resolution = $2 WHERE intent_id = $1 AND status = 'open' RETURNING 1`,
      [intentId, JSON.stringify(resolution)]));
    return rows.length === 1;
  },

  /** The cases in one status (or all), oldest first. */
  async list(db: Executor, status: ReconciliationRow['status'] | 'all'): Promise<ListedCase[]> {
    return (await db.query(
      `SELECT r.intent_id AS "intentId", r.attempt, r.status, r.reason, r.tries, r.last_error AS "lastError", r.opened_at AS "openedAt",
              r.resolved_at AS "resolvedAt", r.resolution, p.tool_id AS "toolId", p.operation_key AS "operationKey"
         FROM execution.reconciliation r JOIN execution.pending_call p ON p.intent_id = r.intent_id
        WHERE $1 = 'all' OR r.status = $1 ORDER BY r.opened_at`, [status])) as ListedCase[];
  },
};
