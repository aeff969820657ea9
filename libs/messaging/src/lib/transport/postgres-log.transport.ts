import { Pool } from 'pg';
import { ChannelListener } from '@tollgate/persistence';
import { type Logger } from 'pino';
import {
  type DeliveredMessage, type EventTransport, retryUntilStopped, type SqlExecutor, type SubscribeOptions, type Subscription, type TransportMessage,
} from './event-transport';

export interface PostgresLogTransportOptions {
  /** The database that holds the log (in embedded mode: the one every service writes to). */
  databaseUrl: string;
  logger: Logger;
  /** Fallback poll when no notification arrived (ms). */
  pollIntervalMs?: number;
  /** Most messages handed to one `handleBatch` call. */
  batchSize?: number;
  /** How often consumer positions are saved (ms); see `flushPositions`. */
  positionFlushMs?: number;
}

/** A position in the log: messages are ordered by the id of the transaction that wrote them, then by row id. */
export interface LogPosition { txid: bigint; id: bigint }

const CHANNEL = 'tollgate_eventlog';
const MAX_ID = 9223372036854775807n;
/** While a transaction that started earlier is still open, rows behind the watermark are retried this soon (ms). */
const PENDING_RETRY_MS = 2;

/** The log's tables, created idempotently at connect (infrastructure of the transport, like a broker's storage, not a service's schema). */
const DDL = [
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
];

const APPEND = `
  WITH ins AS (
    INSERT INTO eventlog.event (topic, key, value, headers)
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[])
    RETURNING topic)
  SELECT pg_notify('${CHANNEL}', string_agg(DISTINCT topic, ',')) FROM ins`;

/**
 * One statement: the watermark, the next rows of these topics before it, and whether rows of these topics wait behind it.
 * The watermark is the oldest transaction still running: every row of an older transaction is final (committed or
 * never visible), so reading only those never skips a row that a long transaction commits later.
 */
const READ = `
  WITH w AS (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin)
  SELECT w.xmin::text AS xmin,
    (SELECT coalesce(json_agg(r), '[]'::json) FROM (
       SELECT e.id::text AS id, e.txid::text AS txid, e.topic, e.key, e.value, e.headers FROM eventlog.event e
        WHERE (e.txid, e.id) > ($1::xid8, $2::bigint) AND e.txid < w.xmin AND e.topic = ANY($3::text[])
        ORDER BY e.txid, e.id LIMIT $4) r) AS rows,
    EXISTS (SELECT 1 FROM eventlog.event e WHERE e.txid >= w.xmin AND e.topic = ANY($3::text[])) AS pending
  FROM w`;

interface LogRow { id: string; txid: string; topic: string; key: string; value: string; headers: Record<string, string> | null }

interface Group {
  options: SubscribeOptions;
  topics: Set<string>;
  position: LogPosition;
  saved: LogPosition;
  stopped: boolean;
  /** Set by a notification that arrived while the group was not sleeping: the next sleep is skipped (no lost wake-up). */
  signalled: boolean;
  wake?: () => void;
}

/**
 * The embedded mode's event log, durable in PostgreSQL (issue 11): no event lives only in memory, so a `kill -9` at
 * any moment loses nothing. Producers in the same database append inside their own transaction
 * (`appendInTransaction`): the event is in the log exactly when the state change commits. Each consumer group reads
 * the log in order from its saved position; one partition per topic, so per-key order holds.
 *
 * Positions are saved every `positionFlushMs` and when a subscription stops, not after each batch: after a crash a
 * group re-reads at most that much, which its inbox absorbs (at-least-once, as with Kafka), and the hot path saves a
 * statement per batch. Consumers wake on NOTIFY (the append sends it on commit), polling only as a fallback.
 */
export class PostgresLogTransport implements EventTransport {
  readonly driver = 'postgres' as const;
  private pool?: Pool;
  private listener?: ChannelListener;
  private readonly groups = new Map<string, Group>();
  private flushTimer?: NodeJS.Timeout;
  private connected = false;

  constructor(private readonly options: PostgresLogTransportOptions) {}

  async connect(): Promise<void> {
    this.pool = new Pool({ connectionString: this.options.databaseUrl, max: 4, application_name: 'tollgate-eventlog' });
    this.pool.on('error', (err) => this.options.logger.warn({ err }, 'event log pool connection error'));
    for (const sql of DDL) await this.pool.query(sql);
    await this.listen();
    this.flushTimer = setInterval(() => void this.flushPositions().catch((err) => this.options.logger.warn({ err }, 'saving consumer positions failed')), this.options.positionFlushMs ?? 200);
    this.flushTimer.unref();
    this.connected = true;
  }

  async publish(messages: readonly TransportMessage[]): Promise<void> {
    if (!this.pool) throw new Error('event log transport is not connected');
    if (messages.length > 0) await this.pool.query(APPEND, appendParameters(messages));
  }

  /** Lag per group: events of its topics appended after its saved position (positions are saved every few seconds). */
  async consumerLag(groupIds: readonly string[]): Promise<{ groupId: string; lag: number }[]> {
    if (!this.pool) return [];
    const out: { groupId: string; lag: number }[] = [];
    for (const groupId of groupIds) {
      const topics = [...(this.groups.get(groupId)?.topics ?? [])];
      const { rows } = await this.pool.query<{ lag: number }>(
        `SELECT count(*)::int AS lag FROM eventlog.event e, eventlog.position p
          WHERE p.group_id = $1 AND e.topic = ANY($2::text[]) AND (e.txid, e.id) > (p.txid, p.id)`, [groupId, topics]);
      out.push({ groupId, lag: rows[0]?.lag ?? 0 });
    }
    return out;
  }

  async appendInTransaction(executor: SqlExecutor, messages: readonly TransportMessage[]): Promise<void> {
    if (messages.length > 0) await executor.query(APPEND, appendParameters(messages));
  }

  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    if (!this.pool) throw new Error('event log transport is not connected');
    if (this.groups.has(options.groupId)) throw new Error(`group ${options.groupId} already has a subscriber`);
    const start = await this.startPosition(options);
    const group: Group = { options, topics: new Set(options.topics), position: start, saved: start, stopped: false, signalled: false };
    this.groups.set(options.groupId, group);
    const loop = this.run(group);
    return {
      stop: async () => {
        group.stopped = true;
        group.wake?.();
        await loop;
        await this.flushPositions();
        this.groups.delete(options.groupId);
      },
    };
  }

  /** Ready while connected and its LISTEN connection is up (it reconnects by itself after any loss). */
  isReady(): boolean {
    return this.connected && (this.listener?.isConnected() ?? false);
  }

  async close(): Promise<void> {
    this.connected = false;
    for (const g of this.groups.values()) {
      g.stopped = true;
      g.wake?.();
    }
    if (this.flushTimer) clearInterval(this.flushTimer);
    await this.flushPositions().catch(() => undefined);
    await this.listener?.stop();
    await this.pool?.end().catch(() => undefined);
    this.listener = undefined;
    this.pool = undefined;
  }

  /** Saves the positions that moved since the last save, in one statement. */
  async flushPositions(): Promise<void> {
    const moved = [...this.groups.entries()].filter(([, g]) => g.position.txid !== g.saved.txid || g.position.id !== g.saved.id);
    if (moved.length === 0 || !this.pool) return;
    const snapshot = moved.map(([id, g]) => [id, g.position] as const);
    await this.pool.query(
      `INSERT INTO eventlog.position (group_id, txid, id) SELECT * FROM unnest($1::text[], $2::xid8[], $3::bigint[])
       ON CONFLICT (group_id) DO UPDATE SET txid = EXCLUDED.txid, id = EXCLUDED.id, updated_at = now()`,
      [snapshot.map(([id]) => id), snapshot.map(([, p]) => p.txid.toString()), snapshot.map(([, p]) => p.id.toString())],
    );
    for (const [id, p] of snapshot) {
      const g = this.groups.get(id);
      if (g) g.saved = p;
    }
  }

  private async startPosition(options: SubscribeOptions): Promise<LogPosition> {
    const [saved] = (await this.pool!.query<{ txid: string; id: string }>('SELECT txid::text, id::text FROM eventlog.position WHERE group_id = $1', [options.groupId])).rows;
    if (saved) return { txid: BigInt(saved.txid), id: BigInt(saved.id) };
    if (options.fromBeginning) return { txid: 0n, id: 0n };
    const [now] = (await this.pool!.query<{ xmin: string }>('SELECT pg_snapshot_xmin(pg_current_snapshot())::text AS xmin')).rows;
    return { txid: BigInt(now!.xmin) - 1n, id: MAX_ID };
  }

  private async run(group: Group): Promise<void> {
    const batchSize = Math.min(this.options.batchSize ?? 100, group.options.maxBatchSize ?? Infinity);
    let caughtUp = false;
    while (!group.stopped) {
      // A lingering group, woken after it had caught up, lets more messages gather first (one transaction for many).
      if (caughtUp && group.options.lingerMs) await new Promise((r) => setTimeout(r, group.options.lingerMs));
      group.signalled = false;
      let read: { rows: DeliveredMessage[]; next: LogPosition; pending: boolean };
      try {
        read = await this.read(group, batchSize);
      } catch (err) {
        this.options.logger.warn({ err, groupId: group.options.groupId }, 'reading the event log failed; will retry');
        await this.sleep(group, 500);
        continue;
      }
      if (read.rows.length > 0) {
        const done = await retryUntilStopped(
          () => group.options.handleBatch(read.rows),
          () => group.stopped,
          (err, tries) => this.options.logger.warn({ err, groupId: group.options.groupId, tries }, 'batch handler failed; will redeliver'),
        );
        if (!done) return;
      }
      group.position = read.next;
      caughtUp = read.rows.length < batchSize;
      if (read.rows.length === batchSize || group.signalled) {
        group.signalled = false;
        continue;
      }
      await this.sleep(group, read.pending ? PENDING_RETRY_MS : (this.options.pollIntervalMs ?? 1000));
    }
  }

  private async read(group: Group, limit: number): Promise<{ rows: DeliveredMessage[]; next: LogPosition; pending: boolean }> {
    const p = group.position;
    const [r] = (await this.pool!.query<{ xmin: string; rows: LogRow[]; pending: boolean }>(READ, [p.txid.toString(), p.id.toString(), [...group.topics], limit])).rows;
    const rows = r!.rows
      .map((x) => ({ ...x, pos: { txid: BigInt(x.txid), id: BigInt(x.id) } }))
      .sort((a, b) => comparePositions(a.pos, b.pos));
    const last = rows.at(-1)?.pos;
    // A full batch continues after its last row; a short one has seen every final row of these topics up to the watermark.
    const next = rows.length === limit ? last! : maxPosition(p, { txid: BigInt(r!.xmin) - 1n, id: MAX_ID });
    return {
      rows: rows.map((x) => ({ topic: x.topic, key: x.key, value: x.value, headers: x.headers ?? {}, partition: 0, offset: x.id })),
      next,
      pending: r!.pending,
    };
  }

  private sleep(group: Group, ms: number): Promise<void> {
    if (group.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done() {
        clearTimeout(timer);
        group.wake = undefined;
        resolve();
      }
      group.wake = done;
    });
  }

  private wakeTopics(topics: string[]): void {
    for (const g of this.groups.values()) {
      if (!topics.some((t) => g.topics.has(t))) continue;
      if (g.wake) g.wake();
      else g.signalled = true;
    }
  }

  private async listen(): Promise<void> {
    const { logger } = this.options;
    this.listener = new ChannelListener({
      databaseUrl: this.options.databaseUrl, channel: CHANNEL, applicationName: 'tollgate-eventlog-listen',
      onNotification: (payload) => this.wakeTopics(payload.split(',')),
      onLost: (err) => logger.warn({ err }, 'event log LISTEN connection lost; reconnecting with back-off (polling meanwhile)'),
      // Appends made while it was away were not heard: every group reads now.
      onRestored: () => {
        logger.info('event log LISTEN connection restored');
        this.wakeTopics([...new Set([...this.groups.values()].flatMap((g) => [...g.topics]))]);
      },
    });
    await this.listener.start();
  }

}

function appendParameters(messages: readonly TransportMessage[]): unknown[] {
  return [
    messages.map((m) => m.topic),
    messages.map((m) => m.key),
    messages.map((m) => m.value),
    messages.map((m) => (m.headers ? JSON.stringify(m.headers) : null)),
  ];
}

export function comparePositions(a: LogPosition, b: LogPosition): number {
  if (a.txid !== b.txid) return a.txid < b.txid ? -1 : 1;
  return a.id === b.id ? 0 : a.id < b.id ? -1 : 1;
}

function maxPosition(a: LogPosition, b: LogPosition): LogPosition {
  return comparePositions(a, b) >= 0 ? a : b;
}
