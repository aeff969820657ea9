import { type EntityManager } from 'typeorm';
import { col, defineTable } from '@tollgate/persistence';
import { type JournalRow, type TimelineRow } from './projection-rows';

/** `ledger.journal_entry`: the double-entry journal, one line per posting entry (owner and provider derived by PostgreSQL). */
export const JOURNAL_ENTRY = defineTable('ledger.journal_entry', {
  posting_id: col.text().required(), seq: col.integer().required(), kind: col.text().required(), intent_id: col.uuid().nullable(), account: col.text().required(),
  asset: col.text().required(), amount: col.bigint().required(), occurred_at: col.timestamptz().required(), event_id: col.uuid().required(),
  recorded_at: col.timestamptz().required(), owner_id: col.text().nullable(), provider_id: col.text().nullable(),
});
/** `ledger.journal_day`: each account's net movement per UTC day (balances as of a time read it, not the whole journal). */
export const JOURNAL_DAY = defineTable('ledger.journal_day', {
  account: col.text().required(), asset: col.text().required(), day: col.date().required(), delta: col.bigint().required(), owner_id: col.text().nullable(), provider_id: col.text().nullable(),
});

/**
 * Writes projection rows into one set of projection tables: the live ones (schema `ledger`, where a statement trigger
 * keeps the daily roll-up) or a replay's shadow ones (where the roll-up is written here, `rollUp`). One multi-row
 * statement per table per batch; rows already there (a redelivery, a replayed event) change nothing. `recordedAt`
 * per row is the archive's time for a replay from the archive; otherwise the database's now().
 */
export interface ProjectionTarget {
  schema: string;
  /** Write the daily roll-up (`journal_day`) in the same statement; the live schema's trigger does it itself. */
  rollUp: boolean;
}

export const LIVE: ProjectionTarget = { schema: 'ledger', rollUp: false };

export async function writeTimelineRows(manager: EntityManager, target: ProjectionTarget, rows: readonly TimelineRow[], recordedAt?: readonly string[]): Promise<void> {
  if (rows.length === 0) return;
  await manager.query(
    `INSERT INTO ${target.schema}.timeline_entry (event_id, intent_id, type, producer, topic, occurred_at, payload, recorded_at)
     SELECT x.event_id, x.intent_id, x.type, x.producer, x.topic, x.occurred_at, x.payload, COALESCE(x.recorded_at, now())
       FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::jsonb[], $8::timestamptz[])
         AS x(event_id, intent_id, type, producer, topic, occurred_at, payload, recorded_at)
     ON CONFLICT (event_id) DO NOTHING`,
    [rows.map((r) => r.eventId), rows.map((r) => r.intentId), rows.map((r) => r.type), rows.map((r) => r.producer), rows.map((r) => r.topic),
      rows.map((r) => r.occurredAt), rows.map((r) => r.payload), recordedAt ?? rows.map(() => null)],
  );
}

export async function writeJournalRows(manager: EntityManager, target: ProjectionTarget, rows: readonly JournalRow[], recordedAt?: readonly string[]): Promise<void> {
  if (rows.length === 0) return;
  const s = target.schema;
  const insert = `INSERT INTO ${s}.journal_entry (posting_id, seq, kind, intent_id, account, asset, amount, occurred_at, event_id, recorded_at)
     SELECT x.posting_id, x.seq, x.kind, x.intent_id, x.account, x.asset, x.amount, x.occurred_at, x.event_id, COALESCE(x.recorded_at, now())
       FROM unnest($1::text[], $2::int[], $3::text[], $4::uuid[], $5::text[], $6::text[], $7::bigint[], $8::timestamptz[], $9::uuid[], $10::timestamptz[])
         AS x(posting_id, seq, kind, intent_id, account, asset, amount, occurred_at, event_id, recorded_at)
     ON CONFLICT DO NOTHING`;
  const rollUp = `WITH inserted AS (${insert} RETURNING account, asset, occurred_at, amount)
     INSERT INTO ${s}.journal_day (account, asset, day, delta)
       SELECT account, asset, (occurred_at AT TIME ZONE 'UTC')::date, sum(amount) FROM inserted GROUP BY 1, 2, 3
     ON CONFLICT (account, asset, day) DO UPDATE SET delta = ${s}.journal_day.delta + EXCLUDED.delta`;
  await manager.query(target.rollUp ? rollUp : insert,
    [rows.map((r) => r.postingId), rows.map((r) => r.seq), rows.map((r) => r.kind), rows.map((r) => r.intentId), rows.map((r) => r.account),
      rows.map((r) => r.asset), rows.map((r) => r.amount), rows.map((r) => r.occurredAt), rows.map((r) => r.eventId), recordedAt ?? rows.map(() => null)]);
}
