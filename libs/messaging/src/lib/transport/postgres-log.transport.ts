import { Pool } from 'pg';
import { type EntityManager } from 'typeorm';
import { ChannelListener, CONNECTION_LIFETIME_S, CONNECTION_SAFETY, PreparingClient } from '@tollgate/persistence';
import { type Logger } from 'pino';
import {
  type DeliveredMessage, type EventTransport, retryUntilStopped, type SqlExecutor, type SubscribeOptions, type Subscription, type TransportMessage,
} from './event-transport';
import { afterCommit } from './commit-hand-off';
import { appendAtCommit, type CommitLog } from './inline-at-commit';
import { type LogSnapshot, parseSnapshot } from './log-snapshot';
import { advance, covers, deferralMs, type Group, handOnTo, type LogTiming, newGroup, nextReadInMs, readAsked, readDue, sleep, wantRead } from './log-group';
import {
  APPEND, type AppendResult, appendParameters, CHANNEL, DDL, deliveredOf, LAG, type LogRow, MAX_DELIVERED, parseNotification, READ_FIRST, READ_IN_WINDOW, READ_PLAN_CACHE_MODE, startPosition, toDelivered,
} from './postgres-log.sql';

export { READ_PLAN_CACHE_MODE } from './postgres-log.sql';

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

  private readonly timing: LogTiming;

  constructor(private readonly options: PostgresLogTransportOptions) {
    this.timing = { settleMs: options.settleMs ?? 250, pollIntervalMs: options.pollIntervalMs ?? 1000 };
  }

  async connect(): Promise<void> {
    this.pool = new Pool({
      connectionString: this.options.databaseUrl, max: 4, application_name: 'tollgate-eventlog', Client: PreparingClient, ...CONNECTION_SAFETY,
      maxLifetimeSeconds: CONNECTION_LIFETIME_S,
      // The read is prepared once per connection, but planned on every run: a generic plan cannot see how recent the
      // position is, and after a few runs PostgreSQL chose one that walks the whole log in id order (the growth run saw
      // the read climb to ~180 ms at 230k rows — cost growing with the work served).
      options: `-c plan_cache_mode=${READ_PLAN_CACHE_MODE}`,
    });
    // Once closing, a connection PostgreSQL ends on its way down is expected: not a warning.
    this.pool.on('error', (err) => (this.connected ? this.options.logger.warn({ err }, 'event log pool connection error')
      : this.options.logger.debug({ problem: err.message }, 'event log pool connection ended while closing')));
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
    this.handOn(BigInt(rows[0]!.txid), deliveredOf(rows[0]!, messages));
  }

  /** Lag per group: events of its topics not yet covered by its saved position (saved every `positionFlushMs`). */
  async consumerLag(groupIds: readonly string[]): Promise<{ groupId: string; lag: number }[]> {
    if (!this.pool) return [];
    const out: { groupId: string; lag: number }[] = [];
    for (const groupId of groupIds) {
      const topics = [...(this.groups.get(groupId)?.topics ?? [])];
      const { rows } = await this.pool.query<{ lag: number }>(LAG, [groupId, topics]);
      out.push({ groupId, lag: rows[0]?.lag ?? 0 });
    }
    return out;
  }

  /**
   * Inside a TypeORM transaction the messages wait for its commit: its consumers on the critical path are offered them
   * first, then everything the transaction appended is written in one statement (see `appendAtCommit`). Any other
   * executor writes them now; NOTIFY and a read deliver them.
   */
  async appendInTransaction(executor: SqlExecutor, messages: readonly TransportMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const runner = (executor as Partial<EntityManager>).queryRunner;
    if (runner?.isTransactionActive) appendAtCommit(runner, this.commitLog, messages);
    else await executor.query(APPEND, appendParameters(messages));
  }

  private readonly commitLog: CommitLog = {
    groups: () => this.groups.values(),
    write: async (runner, messages) => {
      const [row] = (await runner.query(APPEND, appendParameters(messages))) as AppendResult[];
      const delivered = deliveredOf(row!, messages);
      delivered.forEach((d, i) => (messages[i]!.offset = d.offset));
      const txid = BigInt(row!.txid);
      this.awaitingCommit.set(txid, Date.now());
      afterCommit(runner, () => this.handOn(txid, messages));
    },
  };

  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    if (!this.pool) throw new Error('event log transport is not connected');
    if (this.groups.has(options.groupId)) throw new Error(`group ${options.groupId} already has a subscriber`);
    const start = await startPosition(this.pool, options);
    const group = newGroup(options, start, Math.min(this.options.batchSize ?? 100, options.maxBatchSize ?? Infinity));
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

  private async run(group: Group): Promise<void> {
    while (!group.stopped) {
      try {
        const deferMs = deferralMs(group);
        // Deferred messages wait out their time unless a read is asked for; the poll's or settle's timer waits with them.
        if (group.queue.length > 0 && (deferMs <= 0 || readAsked(group))) await this.handleHandOffs(group);
        else if (group.queue.length === 0 && readDue(group, this.timing)) await this.readAndHandle(group);
        else await sleep(group, group.queue.length > 0 ? deferMs : nextReadInMs(group, this.timing));
      } catch (err) {
        if (group.stopped) return;
        this.options.logger.warn({ err, groupId: group.options.groupId }, 'reading the event log failed; will retry');
        group.readWanted = true;
        await sleep(group, 500);
      }
    }
  }

  /** Hands on what committed transactions of this process appended (a lingering group first lets more gather). */
  private async handleHandOffs(group: Group): Promise<void> {
    if (group.options.lingerMs) await new Promise((r) => setTimeout(r, group.options.lingerMs));
    const fresh = group.queue.splice(0).filter((h) => !covers(group, h.txid));
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
    advance(group, snapshot);
  }

  /** Moves a stopping group's position past what it handled, if nothing else is waiting in between. */
  private async settle(group: Group): Promise<void> {
    if (group.window || group.delivered.size === 0 || !this.pool) return;
    const { snapshot, rows } = await this.read(group, 1);
    if (rows.length === 0) advance(group, snapshot);
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

  /** A committed append of this process: each group of its topics gets the messages without reading the log. */
  private handOn(txid: bigint, delivered: readonly DeliveredMessage[]): void {
    this.awaitingCommit.delete(txid);
    for (const g of this.groups.values()) handOnTo(g, txid, delivered);
  }

  /** A notification names the writing transaction: a group that has it (handed on in process) does not read for it. */
  private notified(payload: string): void {
    const { txid, topics } = parseNotification(payload);
    if (txid !== undefined && this.isAwaitingCommit(txid)) return;
    for (const g of this.groups.values()) {
      if (!topics.some((t) => g.topics.has(t))) continue;
      if (txid !== undefined && (covers(g, txid) || g.queue.some((h) => h.txid === txid))) continue;
      wantRead(g);
    }
  }

  /** Whether the commit hook of this process will hand that transaction on (an entry older than 10 s is given up: the poll reads it). */
  private isAwaitingCommit(txid: bigint): boolean {
    const since = Date.now() - 10_000;
    for (const [t, at] of this.awaitingCommit) if (at < since) this.awaitingCommit.delete(t);
    return this.awaitingCommit.has(txid);
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
        for (const g of this.groups.values()) wantRead(g);
      },
    });
    await this.listener.start();
  }
}

