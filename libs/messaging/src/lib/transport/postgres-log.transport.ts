import { Pool } from 'pg';
import { type EntityManager } from 'typeorm';
import { ChannelListener, CONNECTION_SAFETY, PreparingClient } from '@tollgate/persistence';
import { type Logger } from 'pino';
import {
  type DeliveredMessage, type EventTransport, retryUntilStopped, type SqlExecutor, type SubscribeOptions, type Subscription, type TransportMessage,
} from './event-transport';
import { afterCommit } from './commit-hand-off';
import { isVisible, type LogSnapshot, NOT_COVERED_SQL, parseSnapshot, snapshotFromLegacy } from './log-snapshot';

export interface PostgresLogTransportOptions {
  /** The database that holds the log (in embedded mode: the one every service writes to). */
  databaseUrl: string;
  logger: Logger;
  /** Fallback read when no notification arrived (ms). */
  pollIntervalMs?: number;
  /** Most messages handed to one `handleBatch` call. */
  batchSize?: number;
  /** How often consumer positions are saved (ms); see `flushPositions`. */
  positionFlushMs?: number;
  /**
   * How soon after events were handed on in process a group reads the log to move its saved position past them
   * (ms). Until then a restart would hand them again (absorbed by the inbox).
   */
  settleMs?: number;
}

const CHANNEL = 'tollgate_eventlog';
/** The plan mode of the log's own sessions (see `connect`). */
export const READ_PLAN_CACHE_MODE = 'force_custom_plan';
const MAX_ID = 9223372036854775807n;
/** Handed-on transactions a group remembers before it reads the log to fold them into its position. */
const MAX_DELIVERED = 2_000;

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
  // Positions are snapshots now; (txid, id) is kept for positions saved before snapshots.
  'ALTER TABLE eventlog.position ADD COLUMN IF NOT EXISTS snapshot pg_snapshot',
];

/** Appends, and tells listeners (on commit) which transaction wrote to which topics; returns the ids it took. */
const APPEND = `
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
const READ_FIRST = readSql('e.id + 0');
const READ_IN_WINDOW = readSql('e.id');

interface LogRow { id: string; txid: string; topic: string; key: string; value: string; headers: Record<string, string> | null }

/** The events one committed transaction wrote, as handed on in process (`at`: when). */
interface HandOff { txid: bigint; messages: DeliveredMessage[]; at: number }

interface Group {
  options: SubscribeOptions;
  topics: Set<string>;
  batchSize: number;
  /** Every row of every transaction visible in this snapshot has been handled. */
  position: LogSnapshot;
  saved: string;
  /** A read in progress over several batches: the snapshot it reads up to and the last row id handled. */
  window?: { snapshot: LogSnapshot; afterId: bigint };
  /** Transactions handed on in process and handled, not yet covered by `position`. */
  delivered: Set<bigint>;
  queue: HandOff[];
  /** A notification, the poll, a restored connection or a full batch asks for a read. */
  readWanted: boolean;
  lastReadAt: number;
  stopped: boolean;
  wake?: () => void;
}

/**
 * The embedded mode's event log, durable in PostgreSQL: no event lives only in memory, so a `kill -9` at
 * any moment loses nothing. Producers in the same database append inside their own transaction
 * (`appendInTransaction`): the event is in the log exactly when the state change commits. One partition per topic,
 * so per-key order holds.
 *
 * Delivery: a transaction that appended through a TypeORM query runner hands its events to this
 * process's consumer groups right after it commits — no NOTIFY round trip, no read. Other processes' events arrive
 * by NOTIFY (sent on commit), then a read; a poll every `pollIntervalMs` is the fallback. A group's position is a
 * snapshot, so a long or idle transaction anywhere in the database delays only its own rows; no group spins while
 * it waits.
 *
 * Positions are saved every `positionFlushMs` and when a subscription stops: after a crash a group re-reads at most
 * what it handled since its last read, which its inbox absorbs (at-least-once, as with Kafka).
 */
export class PostgresLogTransport implements EventTransport {
  readonly driver = 'postgres' as const;
  private pool?: Pool;
  private listener?: ChannelListener;
  private readonly groups = new Map<string, Group>();
  private flushTimer?: NodeJS.Timeout;
  private connected = false;
  private readonly counts = { reads: 0, handedOn: 0 };
  /**
   * Transactions of this process that appended and have not been handed on yet (with when they appended): their
   * NOTIFY may arrive before the commit hook runs, and must not make every group read what is about to be handed on.
   */
  private readonly awaitingCommit = new Map<bigint, number>();

  constructor(private readonly options: PostgresLogTransportOptions) {}

  async connect(): Promise<void> {
    this.pool = new Pool({
      connectionString: this.options.databaseUrl, max: 4, application_name: 'tollgate-eventlog', Client: PreparingClient, ...CONNECTION_SAFETY,
      // The read is prepared once per connection, but planned on every run: a generic plan cannot see how recent the
      // position is, and after a few runs PostgreSQL chose one that walks the whole log in id order (the growth run saw
      // the read climb to ~180 ms at 230k rows — cost growing with the work served).
      options: `-c plan_cache_mode=${READ_PLAN_CACHE_MODE}`,
    });
    this.pool.on('error', (err) => this.options.logger.warn({ err }, 'event log pool connection error'));
    for (const sql of DDL) await this.pool.query(sql);
    await this.listen();
    this.flushTimer = setInterval(() => void this.flushPositions().catch((err) => this.options.logger.warn({ err }, 'saving consumer positions failed')), this.options.positionFlushMs ?? 200);
    this.flushTimer.unref();
    this.connected = true;
  }

  async publish(messages: readonly TransportMessage[]): Promise<void> {
    if (!this.pool) throw new Error('event log transport is not connected');
    if (messages.length === 0) return;
    const { rows } = await this.pool.query<AppendResult>(APPEND, appendParameters(messages));
    this.handOn(rows[0]!, messages);
  }

  /** Lag per group: events of its topics not yet covered by its saved position (saved every `positionFlushMs`). */
  async consumerLag(groupIds: readonly string[]): Promise<{ groupId: string; lag: number }[]> {
    if (!this.pool) return [];
    const out: { groupId: string; lag: number }[] = [];
    for (const groupId of groupIds) {
      const topics = [...(this.groups.get(groupId)?.topics ?? [])];
      const { rows } = await this.pool.query<{ lag: number }>(
        `SELECT count(*)::int AS lag FROM eventlog.event e, eventlog.position p
          WHERE p.group_id = $1 AND e.topic = ANY($2::text[]) AND ${NOT_COVERED_SQL}`, [groupId, topics]);
      out.push({ groupId, lag: rows[0]?.lag ?? 0 });
    }
    return out;
  }

  async appendInTransaction(executor: SqlExecutor, messages: readonly TransportMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const result = await executor.query(APPEND, appendParameters(messages));
    const row = (Array.isArray(result) ? result[0] : (result as { rows: AppendResult[] }).rows[0]) as AppendResult;
    const runner = (executor as Partial<EntityManager>).queryRunner;
    // Handed on after commit where the transaction is a TypeORM one; otherwise NOTIFY and a read deliver it.
    if (!runner?.isTransactionActive) return;
    this.awaitingCommit.set(BigInt(row.txid), Date.now());
    afterCommit(runner, () => this.handOn(row, messages));
  }

  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    if (!this.pool) throw new Error('event log transport is not connected');
    if (this.groups.has(options.groupId)) throw new Error(`group ${options.groupId} already has a subscriber`);
    const start = await this.startPosition(options);
    const group: Group = {
      options, topics: new Set(options.topics), batchSize: Math.min(this.options.batchSize ?? 100, options.maxBatchSize ?? Infinity),
      position: start, saved: start.text, delivered: new Set(), queue: [], readWanted: true, lastReadAt: 0, stopped: false,
    };
    this.groups.set(options.groupId, group);
    const loop = this.run(group);
    return {
      stop: async () => {
        group.stopped = true;
        group.wake?.();
        await loop;
        await this.settle(group).catch(() => undefined);
        await this.flushPositions();
        this.groups.delete(options.groupId);
      },
    };
  }

  /** Reads of the log and transactions handed on in process since connect, over every group (for tests and metrics). */
  deliveryCounts(): { reads: number; handedOn: number } {
    return { ...this.counts };
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
    const moved = [...this.groups.entries()].filter(([, g]) => g.position.text !== g.saved);
    if (moved.length === 0 || !this.pool) return;
    const snapshot = moved.map(([id, g]) => [id, g.position] as const);
    await this.pool.query(
      `INSERT INTO eventlog.position (group_id, txid, id, snapshot)
       SELECT g, pg_snapshot_xmin(s), 0, s FROM unnest($1::text[], $2::pg_snapshot[]) AS x(g, s)
       ON CONFLICT (group_id) DO UPDATE SET txid = EXCLUDED.txid, id = EXCLUDED.id, snapshot = EXCLUDED.snapshot, updated_at = now()`,
      [snapshot.map(([id]) => id), snapshot.map(([, p]) => p.text)],
    );
    for (const [id, p] of snapshot) {
      const g = this.groups.get(id);
      if (g) g.saved = p.text;
    }
  }

  private async startPosition(options: SubscribeOptions): Promise<LogSnapshot> {
    const [saved] = (await this.pool!.query<{ txid: string; id: string; snapshot: string | null }>(
      'SELECT txid::text, id::text, snapshot::text FROM eventlog.position WHERE group_id = $1', [options.groupId])).rows;
    if (saved) return saved.snapshot ? parseSnapshot(saved.snapshot) : snapshotFromLegacy(BigInt(saved.txid), BigInt(saved.id), MAX_ID);
    if (options.fromBeginning) return parseSnapshot('1:1:');
    const [now] = (await this.pool!.query<{ s: string }>('SELECT pg_current_snapshot()::text AS s')).rows;
    return parseSnapshot(now!.s);
  }

  private async run(group: Group): Promise<void> {
    while (!group.stopped) {
      try {
        const deferMs = this.deferralMs(group);
        if (group.queue.length > 0 && (deferMs <= 0 || this.readDue(group))) await this.handleHandOffs(group);
        else if (group.queue.length === 0 && this.readDue(group)) await this.readAndHandle(group);
        else await this.sleep(group, group.queue.length > 0 ? deferMs : this.nextReadInMs(group));
      } catch (err) {
        if (group.stopped) return;
        this.options.logger.warn({ err, groupId: group.options.groupId }, 'reading the event log failed; will retry');
        group.readWanted = true;
        await this.sleep(group, 500);
      }
    }
  }

  /**
   * How much longer the handed-on messages may wait (`deferrable`): while every queued message is of a deferrable
   * topic, until the oldest has waited `upToMs`; 0 once anything else is queued.
   */
  private deferralMs(group: Group): number {
    const d = group.options.deferrable;
    if (!d || group.queue.length === 0) return 0;
    if (group.queue.some((h) => h.messages.some((m) => !d.topics.includes(m.topic)))) return 0;
    return group.queue[0]!.at + d.upToMs - Date.now();
  }

  private readDue(group: Group): boolean {
    return group.readWanted || group.window !== undefined || this.nextReadInMs(group) <= 0;
  }

  /** A read folds handed-on transactions into the position soon after; with nothing handed on, the poll is the fallback. */
  private nextReadInMs(group: Group): number {
    const every = group.delivered.size > 0 ? (this.options.settleMs ?? 250) : (this.options.pollIntervalMs ?? 1000);
    return group.lastReadAt + every - Date.now();
  }

  /** Hands on what committed transactions of this process appended (a lingering group first lets more gather). */
  private async handleHandOffs(group: Group): Promise<void> {
    if (group.options.lingerMs) await new Promise((r) => setTimeout(r, group.options.lingerMs));
    const fresh = group.queue.splice(0).filter((h) => !this.covers(group, h.txid));
    const messages = fresh.flatMap((h) => h.messages);
    for (let i = 0; i < messages.length; i += group.batchSize) {
      if (!(await this.handle(group, messages.slice(i, i + group.batchSize)))) return;
    }
    for (const h of fresh) group.delivered.add(h.txid);
    this.counts.handedOn += fresh.length;
    if (group.delivered.size > MAX_DELIVERED) group.readWanted = true;
  }

  private async readAndHandle(group: Group): Promise<void> {
    if (group.window === undefined && group.options.lingerMs && group.readWanted && group.lastReadAt > 0) await new Promise((r) => setTimeout(r, group.options.lingerMs));
    group.readWanted = false;
    group.lastReadAt = Date.now();
    const { snapshot, rows } = await this.read(group);
    if (rows.length > 0 && !(await this.handle(group, rows.map(toDelivered)))) return;
    if (rows.length === group.batchSize) {
      group.window = { snapshot, afterId: BigInt(rows.at(-1)!.id) };
      return;
    }
    this.advance(group, snapshot);
  }

  /** Moves the position to a snapshot whose rows are all handled; what it covers is forgotten. */
  private advance(group: Group, snapshot: LogSnapshot): void {
    group.position = snapshot;
    group.window = undefined;
    for (const txid of group.delivered) if (isVisible(txid, snapshot)) group.delivered.delete(txid);
  }

  /** Moves a stopping group's position past what it handled, if nothing else is waiting in between. */
  private async settle(group: Group): Promise<void> {
    if (group.window || group.delivered.size === 0 || !this.pool) return;
    const { snapshot, rows } = await this.read(group, 1);
    if (rows.length === 0) this.advance(group, snapshot);
  }

  private async read(group: Group, limit = group.batchSize): Promise<{ snapshot: LogSnapshot; rows: LogRow[] }> {
    const p = group.position;
    const w = group.window;
    this.counts.reads++;
    const [r] = (await this.pool!.query<{ snapshot: string; rows: LogRow[] }>(w ? READ_IN_WINDOW : READ_FIRST, [
      p.xmax.toString(), p.xip.map(String), [...group.delivered].map(String), (w?.afterId ?? 0n).toString(), w?.snapshot.text ?? null, [...group.topics], limit,
    ])).rows;
    return { snapshot: w?.snapshot ?? parseSnapshot(r!.snapshot), rows: r!.rows };
  }

  private handle(group: Group, messages: DeliveredMessage[]): Promise<boolean> {
    return retryUntilStopped(
      () => group.options.handleBatch(messages),
      () => group.stopped,
      (err, tries) => this.options.logger.warn({ err, groupId: group.options.groupId, tries }, 'batch handler failed; will redeliver'),
    );
  }

  /** Whether the transaction's rows were already handled by this group (or are being, in the current window). */
  private covers(group: Group, txid: bigint): boolean {
    return isVisible(txid, group.position) || group.delivered.has(txid) || (group.window !== undefined && isVisible(txid, group.window.snapshot));
  }

  /** A committed append of this process: each group of its topics gets the messages without reading the log. */
  private handOn(row: AppendResult, messages: readonly TransportMessage[]): void {
    const txid = BigInt(row.txid);
    this.awaitingCommit.delete(txid);
    const ids = [...row.ids].sort((a, b) => (BigInt(a) < BigInt(b) ? -1 : 1));
    const delivered = messages.map((m, i): DeliveredMessage => ({ topic: m.topic, key: m.key, value: m.value, headers: m.headers ?? {}, partition: 0, offset: ids[i]! }));
    for (const g of this.groups.values()) {
      const mine = delivered.filter((m) => g.topics.has(m.topic));
      if (mine.length === 0 || g.stopped) continue;
      g.queue.push({ txid, messages: mine, at: Date.now() });
      g.wake?.();
    }
  }

  /** Until `ms` pass or something wakes the group (a hand-off, a notification, a stop); a deferred queue sleeps too. */
  private sleep(group: Group, ms: number): Promise<void> {
    if (group.stopped || (group.queue.length > 0 && this.deferralMs(group) <= 0) || group.readWanted) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(done, Math.max(0, ms));
      function done() {
        clearTimeout(timer);
        group.wake = undefined;
        resolve();
      }
      group.wake = done;
    });
  }

  /** A notification names the writing transaction: a group that has it (handed on in process) does not read for it. */
  private notified(payload: string): void {
    const [txidText, topicList] = payload.includes(';') ? payload.split(';', 2) as [string, string] : [undefined, payload];
    const txid = txidText ? BigInt(txidText) : undefined;
    const topics = topicList.split(',');
    if (txid !== undefined && this.isAwaitingCommit(txid)) return;
    for (const g of this.groups.values()) {
      if (!topics.some((t) => g.topics.has(t))) continue;
      if (txid !== undefined && (this.covers(g, txid) || g.queue.some((h) => h.txid === txid))) continue;
      this.wantRead(g);
    }
  }

  /** Whether the commit hook of this process will hand that transaction on (an entry older than 10 s is given up: the poll reads it). */
  private isAwaitingCommit(txid: bigint): boolean {
    const since = Date.now() - 10_000;
    for (const [t, at] of this.awaitingCommit) if (at < since) this.awaitingCommit.delete(t);
    return this.awaitingCommit.has(txid);
  }

  private wantRead(group: Group): void {
    group.readWanted = true;
    group.wake?.();
  }

  private async listen(): Promise<void> {
    const { logger } = this.options;
    this.listener = new ChannelListener({
      databaseUrl: this.options.databaseUrl, channel: CHANNEL, applicationName: 'tollgate-eventlog-listen',
      onNotification: (payload) => this.notified(payload),
      onLost: (err) => logger.warn({ err }, 'event log LISTEN connection lost; reconnecting with back-off (polling meanwhile)'),
      // Appends made while it was away were not heard: every group reads now.
      onRestored: () => {
        logger.info('event log LISTEN connection restored');
        for (const g of this.groups.values()) this.wantRead(g);
      },
    });
    await this.listener.start();
  }
}

interface AppendResult { txid: string; ids: string[] }

function toDelivered(x: LogRow): DeliveredMessage {
  return { topic: x.topic, key: x.key, value: x.value, headers: x.headers ?? {}, partition: 0, offset: String(x.id) };
}

function appendParameters(messages: readonly TransportMessage[]): unknown[] {
  return [
    messages.map((m) => m.topic),
    messages.map((m) => m.key),
    messages.map((m) => m.value),
    messages.map((m) => (m.headers ? JSON.stringify(m.headers) : null)),
  ];
}
