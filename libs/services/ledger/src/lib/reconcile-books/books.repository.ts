import { type EntityManager } from 'typeorm';
import { TERMINAL_EVENT_TYPES } from '@tollgate/call-life';
import { type ReconciliationReport } from './reconciliation-report';
import { type BookBalance } from './compare-books';

type Executor = Pick<EntityManager, 'query'>;
type Report = ReconciliationReport;

/**
 * The reconciliation report's reads, across the services' schemas in the one database (read-only). `schema` is
 * always one of the report's own service names, never input; `limit` bounds every list.
 */
export const Books = {
  /** The schemas this database holds. */
  async schemas(m: Executor): Promise<Set<string>> {
    return new Set(((await m.query('SELECT nspname FROM pg_namespace')) as { nspname: string }[]).map((r) => r.nspname));
  },

  /** A service's double-entry balances. */
  async balances(m: Executor, schema: 'payment' | 'settlement'): Promise<BookBalance[]> {
    return (await m.query(`SELECT account, asset, balance::text AS balance FROM "${schema}".balance`)) as BookBalance[];
  },

  /** The journal's balances, summed per account and asset. */
  async journalBalances(m: Executor): Promise<BookBalance[]> {
    return (await m.query('SELECT account, asset, sum(amount)::text AS balance FROM ledger.journal_entry GROUP BY 1, 2')) as BookBalance[];
  },

  /** Calls whose first event is older than `olderThanSeconds` with no terminal event yet. */
  async callsNotTerminal(m: Executor, olderThanSeconds: number, limit: number): Promise<Report['callsNotTerminal']['calls']> {
    return (await m.query(
      `SELECT intent_id AS "intentId", min(occurred_at) AS "startedAt", (array_agg(type ORDER BY occurred_at DESC, recorded_at DESC))[1] AS "lastType",
              max(occurred_at) AS "lastAt", max(payload->>'operationKey') AS "operationKey"
         FROM ledger.timeline_entry GROUP BY intent_id
        HAVING bool_and(type <> ALL($1::text[])) AND min(occurred_at) < now() - make_interval(secs => $2)
        ORDER BY min(occurred_at) LIMIT $3`, [TERMINAL_EVENT_TYPES, olderThanSeconds, limit])) as Report['callsNotTerminal']['calls'];
  },

  /** Execution's open reconciliations: calls its model says are owed a verdict. */
  async openUnknownOutcomes(m: Executor, limit: number): Promise<Report['unknownOutcomes']['open']> {
    return (await m.query(
      `SELECT r.intent_id AS "intentId", r.attempt, r.reason, r.tries, r.opened_at AS "openedAt"
         FROM execution.reconciliation r JOIN execution.pending_call p ON p.intent_id = r.intent_id
        WHERE p.reconciling_attempt IS NOT NULL ORDER BY r.opened_at LIMIT $1`,
      [limit])) as Report['unknownOutcomes']['open'];
  },

  /** A service's parked events not re-driven yet. */
  async parkedEvents(m: Executor, schema: string, limit: number): Promise<Report['parkedEvents']> {
    return (await m.query(
      `SELECT $1::text AS service, consumer, topic, partition, "offset", event_id AS "eventId", reason, parked_at AS "parkedAt"
         FROM "${schema}".parked_event WHERE resolved_at IS NULL ORDER BY parked_at LIMIT $2`, [schema, limit])) as Report['parkedEvents'];
  },
};
