import { type EntityManager } from 'typeorm';
import { TERMINAL_EVENT_TYPES } from '@tollgate/call-life';
import { col, defineTable, select } from '@tollgate/persistence';
import { type ReconciliationReport } from './reconciliation-report';
import { type BookBalance } from './compare-books';
import { type CallFacts } from './metered-check';

type Executor = Pick<EntityManager, 'query'>;
type Report = ReconciliationReport;

// The rows of the report's statements, each declared beside the statements that return it.
const NAMESPACE = defineTable('(pg_namespace)', { nspname: col.text().required() });
const BALANCE_LINE = defineTable('(balance line)', { account: col.text().required(), asset: col.text().required(), balance: col.text().required() });
const OPEN_CALL = defineTable('(call not terminal)', {
  intent_id: col.uuid().required(), started_at: col.timestamptz().required(), last_type: col.text().required(), last_at: col.timestamptz().required(), operation_key: col.text().nullable(),
});
const OPEN_CASE = defineTable('(open reconciliation)', {
  intent_id: col.uuid().required(), attempt: col.integer().required(), reason: col.text().required(), tries: col.integer().required(), opened_at: col.timestamptz().required(),
});
const CALL_FACTS = defineTable('(call facts)', { intent_id: col.uuid().required(), events: col.jsonb<CallFacts['events']>().required() });
const PARKED = defineTable('(parked event)', {
  service: col.text().required(), consumer: col.text().required(), topic: col.text().required(), partition: col.integer().required(), offset: col.text().required(),
  event_id: col.uuid().nullable(), reason: col.text().required(), parked_at: col.timestamptz().required(),
});

/**
 * The reconciliation report's reads, across the services' schemas in the one database (read-only). `schema` is
 * always one of the report's own service names, never input; `limit` bounds every list.
 */
export const Books = {
  /** The schemas this database holds. */
  async schemas(m: Executor): Promise<Set<string>> {
    return new Set((await select(m, NAMESPACE, ['nspname'], 'SELECT nspname FROM pg_namespace')).map((r) => r.nspname));
  },

  /** A service's double-entry balances. */
  async balances(m: Executor, schema: 'payment' | 'settlement'): Promise<BookBalance[]> {
    return select(m, BALANCE_LINE, ['account', 'asset', 'balance'], `SELECT account, asset, balance::text AS balance FROM "${schema}".balance`);
  },

  /** The journal's balances, summed per account and asset. */
  async journalBalances(m: Executor): Promise<BookBalance[]> {
    return select(m, BALANCE_LINE, ['account', 'asset', 'balance'], 'SELECT account, asset, sum(amount)::text AS balance FROM ledger.journal_entry GROUP BY 1, 2');
  },

  /** Every fact the ledger holds of each metered call (a hold with a metered price), the newest `limit` calls. */
  async meteredCalls(m: Executor, limit: number): Promise<CallFacts[]> {
    const rows = await select(m, CALL_FACTS, ['intent_id', 'events'],
      `SELECT t.intent_id, jsonb_agg(jsonb_build_object('type', t.type, 'payload', t.payload) ORDER BY t.occurred_at) AS events
         FROM ledger.timeline_entry t
        WHERE t.intent_id IN (SELECT h.intent_id FROM ledger.timeline_entry h WHERE h.type = 'PaymentHeld' AND h.payload ? 'metered' ORDER BY h.occurred_at DESC LIMIT $1)
        GROUP BY t.intent_id`, [limit]);
    return rows.map((r) => ({ intentId: r.intent_id, events: r.events }));
  },

  /** Calls whose first event is older than `olderThanSeconds` with no terminal event yet. */
  async callsNotTerminal(m: Executor, olderThanSeconds: number, limit: number): Promise<Report['callsNotTerminal']['calls']> {
    const rows = await select(m, OPEN_CALL, ['intent_id', 'started_at', 'last_type', 'last_at', 'operation_key'],
      `SELECT intent_id, min(occurred_at) AS started_at, (array_agg(type ORDER BY occurred_at DESC, recorded_at DESC))[1] AS last_type,
              max(occurred_at) AS last_at, max(payload->>'operationKey') AS operation_key
         FROM ledger.timeline_entry GROUP BY intent_id
        HAVING bool_and(type <> ALL($1::text[])) AND min(occurred_at) < now() - make_interval(secs => $2)
        ORDER BY min(occurred_at) LIMIT $3`, [TERMINAL_EVENT_TYPES, olderThanSeconds, limit]);
    return rows.map((r) => ({ intentId: r.intent_id, startedAt: r.started_at.toISOString(), lastType: r.last_type, lastAt: r.last_at.toISOString(), operationKey: r.operation_key }));
  },

  /** Execution's open reconciliations: calls its model says are owed a verdict. */
  async openUnknownOutcomes(m: Executor, limit: number): Promise<Report['unknownOutcomes']['open']> {
    const rows = await select(m, OPEN_CASE, ['intent_id', 'attempt', 'reason', 'tries', 'opened_at'],
      `SELECT r.intent_id, r.attempt, r.reason, r.tries, r.opened_at
         FROM execution.reconciliation r JOIN execution.pending_call p ON p.intent_id = r.intent_id
        WHERE p.reconciling_attempt IS NOT NULL ORDER BY r.opened_at LIMIT $1`, [limit]);
    return rows.map((r) => ({ intentId: r.intent_id, attempt: r.attempt, reason: r.reason, tries: r.tries, openedAt: r.opened_at.toISOString() }));
  },

  /** A service's parked events not re-driven yet. */
  async parkedEvents(m: Executor, schema: string, limit: number): Promise<Report['parkedEvents']> {
    const rows = await select(m, PARKED, ['service', 'consumer', 'topic', 'partition', 'offset', 'event_id', 'reason', 'parked_at'],
      `SELECT $1::text AS service, consumer, topic, partition, "offset"::text AS "offset", event_id, reason, parked_at
         FROM "${schema}".parked_event WHERE resolved_at IS NULL ORDER BY parked_at LIMIT $2`, [schema, limit]);
    return rows.map((r) => ({ service: r.service, consumer: r.consumer, topic: r.topic, partition: r.partition, offset: r.offset, eventId: r.event_id, reason: r.reason, parkedAt: r.parked_at.toISOString() }));
  },
};
