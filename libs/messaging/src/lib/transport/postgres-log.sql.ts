import { type Pool } from 'pg';
import { type DeliveredMessage, type SubscribeOptions, type TransportMessage } from './event-transport';
import { type LogSnapshot, NOT_COVERED_SQL, parseSnapshot, snapshotFromLegacy } from './log-snapshot';

// The statements of the PostgreSQL event log (embedded mode) and the shape of its rows.

export const CHANNEL = 'tollgate_eventlog';
/** The plan mode of the log's own sessions (see `connect`). */
export const READ_PLAN_CACHE_MODE = 'force_custom_plan';
export const MAX_ID = 9223372036854775807n;
/** Handed-on transactions a group remembers before it reads the log to fold them into its position. */
export const MAX_DELIVERED = 2_000;

/** The log's tables, created idempotently at connect (infrastructure of the transport, like a broker's storage, not a service's schema). */
export const DDL = [
  'CREATE SCHEMA IF NOT EXISTS eventlog',
  `CREATE TABLE IF NOT EXISTS eventlog.event (
     id         bigserial PRIMARY KEY,
     txid       xid8        NOT NULL DEFAULT pg_current_xact_id(),
     topic      text        NOT NULL,
     key        text        NOT NULL,
     value      text        NOT NULL,
     headers    jsonb,
     created_at timestamptz NOT NULL DEFAULT now())`,
  'CREATE INDEX IF NOT EXISTS event_log_order ON eventlog.event (txid, id)',
  `CREATE TABLE IF NOT EXISTS eventlog.position (
     group_id   text PRIMARY KEY,
     txid       xid8        NOT NULL,
     id         bigint      NOT NULL,
     updated_at timestamptz NOT NULL DEFAULT now())`,
  // Positions are snapshots now; (txid, id) is kept for positions saved before snapshots.
  'ALTER TABLE eventlog.position ADD COLUMN IF NOT EXISTS snapshot pg_snapshot',
];

/** Appends, and tells listeners (on commit) which transaction wrote to which topics; returns the ids it took. */
export const APPEND = `
  WITH ins AS (
    INSERT INTO eventlog.event (topic, key, value, headers)
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[])
    RETURNING id, topic)
  SELECT pg_current_xact_id()::text AS txid, array_agg(id ORDER BY id)::text[] AS ids,
         pg_notify('${CHANNEL}', pg_current_xact_id()::text || ';' || string_agg(DISTINCT topic, ',')) AS notified
    FROM ins`;

/**
 * One statement: the rows of these topics written by transactions that had not ended in the group's position ($1,
 * $2: its xmax and running list) but had in the window's snapshot ($5, or now), except those already handed on in
 * process ($3), after row $4 of the window, in row order. Rows of a transaction still running are not visible and
 * stay behind until a later window; nothing else waits for it.
 *
 * Two plans, so the cost never grows with the log. A first read (no window: $4 = 0) finds its
 * rows through the (txid, id) index — the few transactions since the position — and sorts them: `ORDER BY id + 0`
 * keeps PostgreSQL from walking the primary key in id order from the start of the log, which it chose when it
 * expected matching rows early (the growth run: ~160 ms per read at 700k rows). A read inside a window (catching up
 * a backlog) walks the primary key from the window's last row, where the next rows are.
 */
const readSql = (orderBy: 'e.id' | 'e.id + 0') => `
  WITH w AS (SELECT coalesce($5::pg_snapshot, pg_current_snapshot()) AS s)
  SELECT w.s::text AS snapshot,
    (SELECT coalesce(json_agg(r ORDER BY r.id), '[]'::json) FROM (
       SELECT e.id, e.txid::text AS txid, e.topic, e.key, e.value, e.headers FROM eventlog.event e
        WHERE (e.txid >= $1::xid8 OR e.txid = ANY($2::xid8[])) AND pg_visible_in_snapshot(e.txid, w.s)
          AND e.txid <> ALL($3::xid8[]) AND e.id > $4::bigint AND e.topic = ANY($6::text[])
        ORDER BY ${orderBy} LIMIT $7) r) AS rows
  FROM w`;
export const READ_FIRST = readSql('e.id + 0');
export const READ_IN_WINDOW = readSql('e.id');

export interface LogRow { id: string; txid: string; topic: string; key: string; value: string; headers: Record<string, string> | null }

export interface AppendResult { txid: string; ids: string[] }

export function toDelivered(x: LogRow): DeliveredMessage {
  return { topic: x.topic, key: x.key, value: x.value, headers: x.headers ?? {}, partition: 0, offset: String(x.id) };
}

export function appendParameters(messages: readonly TransportMessage[]): unknown[] {
  return [
    messages.map((m) => m.topic),
    messages.map((m) => m.key),
    messages.map((m) => m.value),
    messages.map((m) => (m.headers ? JSON.stringify(m.headers) : null)),
  ];
}

/** Events of a group's topics ($2) not yet covered by its saved position ($1: the group). */
export const LAG = `SELECT count(*)::int AS lag FROM eventlog.event e, eventlog.position p
  WHERE p.group_id = $1 AND e.topic = ANY($2::text[]) AND ${NOT_COVERED_SQL}`;

/** The messages of an append as delivered, each with the row id it took (ids come back in insertion order). */
export function deliveredOf(row: AppendResult, messages: readonly TransportMessage[]): DeliveredMessage[] {
  const ids = [...row.ids].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
  return messages.map((m, i): DeliveredMessage => ({ topic: m.topic, key: m.key, value: m.value, headers: m.headers ?? {}, partition: 0, offset: ids[i]! }));
}

/** Where a group starts: its saved position, else the log's beginning or now (`fromBeginning`). */
export async function startPosition(pool: Pool, options: SubscribeOptions): Promise<LogSnapshot> {
  const [saved] = (await pool.query<{ txid: string; id: string; snapshot: string | null }>(
    'SELECT txid::text, id::text, snapshot::text FROM eventlog.position WHERE group_id = $1', [options.groupId])).rows;
  if (saved) return saved.snapshot ? parseSnapshot(saved.snapshot) : snapshotFromLegacy(BigInt(saved.txid), BigInt(saved.id), MAX_ID);
  if (options.fromBeginning) return parseSnapshot('1:1:');
  const [now] = (await pool.query<{ s: string }>('SELECT pg_current_snapshot()::text AS s')).rows;
  return parseSnapshot(now!.s);
}

/** A notification's payload: the writing transaction (absent from old writers) and the topics it wrote to. */
export function parseNotification(payload: string): { txid: bigint | undefined; topics: string[] } {
  const [txidText, topicList] = payload.includes(';') ? payload.split(';', 2) as [string, string] : [undefined, payload];
  return { txid: txidText ? BigInt(txidText) : undefined, topics: topicList.split(',') };
}
