import { type EntityManager } from 'typeorm';
import { awaitingVerdict, type CallState } from '@tollgate/call-life';
import { col, defineTable, type RowOf, select } from '@tollgate/persistence';
import { type Resolution } from './dispatch';
import { PENDING_CALL, type PendingCallRow } from './pending-calls.repository';

/**
 * `execution.reconciliation`: the record of a call whose verdict execution owes (`awaitingVerdict`): why it was
 * opened, the reconciler's tries, and who decided it, when and why. Whether it is open is the model's answer
 * (`pending_call.reconciling_attempt`), not a column of its own.
 */
export const RECONCILIATION = defineTable('execution.reconciliation', {
  intent_id: col.uuid().required(),
  attempt: col.integer().required(),
  reason: col.text().required(),
  tries: col.integer().required(),
  last_error: col.text().nullable(),
  opened_at: col.timestamptz().required(),
  resolved_at: col.timestamptz().nullable(),
  resolution: col.jsonb<Resolution>().nullable(),
});
export type ReconciliationRow = RowOf<typeof RECONCILIATION>;

/** A case as the ops CLI lists it: the record, the call's tool and key, and the model's word (`open` / `resolved`). */
const LISTED_CASE = defineTable('(listed reconciliation)', {
  ...RECONCILIATION.columns, tool_id: col.text().nullable(), operation_key: col.text().nullable(), open: col.boolean().required(),
});

/** A call the due work claimed: its state and the request's arguments. */
export type ClaimedCall = Pick<PendingCallRow, 'intent_id' | 'life' | 'arguments'>;

/** A change of a call's state, as the dispatch workflow saves it. */
export interface VerdictChange {
  before: CallState | undefined;
  life: CallState;
  resolution?: Resolution;
}

type Executor = Pick<EntityManager, 'query'>;

/** A dispatched attempt with no result this long past its deadline was interrupted (the process died mid-call). */
export const DEFAULT_STALL_GRACE_MS = 5_000;
/** Most interrupted attempts claimed per round of due work, oldest first (the rest in the next round). */
export const STALL_SWEEP_BATCH = 100;
/** Most calls owed a verdict tried per round. */
export const OPEN_CASES_BATCH = 20;

/** The stall claim ($1: grace in seconds, $2: most rows), exported for the test that checks its plan. */
export const STALLED = `SELECT intent_id, life, arguments FROM execution.pending_call
  WHERE in_flight_attempt IS NOT NULL AND deadline_at < now() - make_interval(secs => $1) ORDER BY deadline_at LIMIT $2 FOR UPDATE SKIP LOCKED`;

/** The reconciler's statements: its record, and the calls the model says are in flight or owed a verdict. */
export const Reconciliations = {
  /** Opens the record of every call that now awaits a verdict, and records each decision given, in two statements. */
  async record(m: Executor, changes: readonly VerdictChange[]): Promise<void> {
    const opened = changes.flatMap((c) => {
      const n = awaitingVerdict(c.life);
      return n !== undefined && (!c.before || awaitingVerdict(c.before) !== n) ? [{ intentId: c.life.intentId, attempt: n, reason: c.life.attempts[String(n)]?.unknown?.reason ?? 'read_back_unreachable' }] : [];
    });
    if (opened.length > 0) {
      await m.query(`INSERT INTO execution.reconciliation (intent_id, attempt, reason) SELECT * FROM unnest($1::uuid[], $2::int[], $3::text[]) ON CONFLICT (intent_id) DO NOTHING`,
        [opened.map((o) => o.intentId), opened.map((o) => o.attempt), opened.map((o) => o.reason)]);
    }
    for (const c of changes.filter((x) => x.resolution)) {
      await m.query('UPDATE execution.reconciliation SET resolved_at = now(), resolution = $2 WHERE intent_id = $1', [c.life.intentId, JSON.stringify(c.resolution)]);
    }
  },

  /**
   * Calls with an attempt in flight `graceS` seconds past their deadline, oldest first, at most `limit`, locked for the
   * runner's due work (other instances skip them) — the partial index `pending_call_in_flight`, read in order: an index
   * scan marks the entries of rows that left the index dead as it passes them, where a bitmap scan would read them
   * again every round until a vacuum.
   */
  claimStalled(db: Executor, graceS: number, limit: number): Promise<ClaimedCall[]> {
    return select(db, PENDING_CALL, ['intent_id', 'life', 'arguments'], STALLED, [graceS, limit]);
  },

  /**
   * The calls owed a verdict not tried for `everyS` seconds (a try's claim saves the row, which counts as touching it),
   * least recently touched first, at most `limit`, locked (the partial index `pending_call_reconciling`).
   */
  claimOpen(db: Executor, everyS: number, limit: number): Promise<ClaimedCall[]> {
    return select(db, PENDING_CALL, ['intent_id', 'life', 'arguments'],
      `SELECT intent_id, life, arguments FROM execution.pending_call
        WHERE reconciling_attempt IS NOT NULL AND updated_at < now() - make_interval(secs => $1) ORDER BY updated_at LIMIT $2 FOR UPDATE SKIP LOCKED`, [everyS, limit]);
  },

  /** One more try counted for a case, and why it could not decide (null: it is being decided). */
  async noteTry(db: Executor, intentId: string, error: string | null): Promise<void> {
    await db.query('UPDATE execution.reconciliation SET tries = tries + 1, last_error = COALESCE($2, last_error) WHERE intent_id = $1', [intentId, error]);
  },

  /** The cases in one state (or all), oldest first, as the API answers. */
  async list(db: Executor, state: 'open' | 'resolved' | 'all'): Promise<Record<string, unknown>[]> {
    const rows = await select(db, LISTED_CASE, ['intent_id', 'attempt', 'reason', 'tries', 'last_error', 'opened_at', 'resolved_at', 'resolution', 'tool_id', 'operation_key', 'open'],
      `SELECT r.intent_id, r.attempt, r.reason, r.tries, r.last_error, r.opened_at, r.resolved_at, r.resolution, p.tool_id, p.operation_key,
              p.reconciling_attempt IS NOT NULL AS open
         FROM execution.reconciliation r JOIN execution.pending_call p ON p.intent_id = r.intent_id
        WHERE $1 = 'all' OR (p.reconciling_attempt IS NOT NULL) = ($1 = 'open') ORDER BY r.opened_at`, [state]);
    return rows.map((r) => ({
      intentId: r.intent_id, attempt: r.attempt, status: r.open ? 'open' : 'resolved', reason: r.reason, tries: r.tries, lastError: r.last_error,
      openedAt: r.opened_at, resolvedAt: r.resolved_at, resolution: r.resolution, toolId: r.tool_id, operationKey: r.operation_key,
    }));
  },
};
