import { type DataSource, type EntityManager } from 'typeorm';
import { type Logger } from 'pino';
import { ContractViolationError } from '@tollgate/contracts';
import { type Deferrable, type DeliveredMessage, type EventTransport, type InlineMode, type Subscription } from '../transport/event-transport';
import { OutboxWriter } from '../outbox/outbox-writer';
import { decodeOnce } from './decode-once';
import { DEGRADED_AFTER_MS, isTransientFailure, retryDelayMs, TRANSIENT_BUDGET_MS } from './failure-policy';
import { type BatchApplier, type EventHandler } from './handler';
import { describe, Parking } from './parking';
import { type Decoded, TransactionApplier } from './transaction-applier';
import { afterCommit } from '../transport/commit-hand-off';

export { type BatchApplier, type BatchContext, type BatchEvent, type EventHandler, type HandleContext, on, type ParkedContext, perBatch } from './handler';

export interface InboxConsumerOptions {
  /** Stable consumer name: the inbox deduplicates per name, and the default group id derives from it. */
  name: string;
  producer: string;
  schema: string;
  dataSource: DataSource;
  transport: EventTransport;
  logger: Logger;
  // Handlers for different payload types share one list.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  handlers: EventHandler<any>[];
  /** Override the group (e.g. to re-read a topic from the start); the inbox still deduplicates by `name`. */
  groupId?: string;
  /** Called after a batch's commit when its handlers wrote outbox rows: the service's relay publishes them at once. */
  onOutboxWritten?: () => void;
  /** Writes the dead-letter event of a parked message (the service's own outbox writer). */
  outbox?: OutboxWriter;
  /** Tries of one event whose handler keeps failing before it is parked (default 5). */
  maxAttempts?: number;
  /** How long a batch may fail transiently while the database answers before it is treated as failing (ms, default TRANSIENT_BUDGET_MS). */
  transientBudgetMs?: number;
  /** How often requested re-drives of parked events are picked up (ms, default 2000). */
  redriveIntervalMs?: number;
  /** Off the critical path: gather messages this long before applying them together (see SubscribeOptions). */
  lingerMs?: number;
  /** Most events per transaction (see SubscribeOptions). */
  maxBatchSize?: number;
  /** Topics whose events alone may wait for more, on the critical path (see SubscribeOptions). */
  deferrable?: Deferrable;
  /** On the critical path, embedded mode: events of these topics are applied inside the producer's transaction (see SubscribeOptions.applyInline). */
  inline?: readonly string[];
  /** Applies the batch's new events in one call (see `perBatch`); the handlers then only declare what is consumed. */
  applyBatch?: BatchApplier;
  /**
   * The batch applier folds events into a state that absorbs duplicates by itself (the call-life model: `evolve` is
   * duplicate- and order-insensitive, and every decision acts on the folded state), so no inbox row is written per
   * event — one statement less per batch. Copies of one event within a batch are still dropped.
   */
  dedupedByModel?: boolean;
}


/**
 * Consumes events for one service. A delivered batch is validated against the
 * contracts, then applied in ONE transaction: one multi-row insert records the
 * event ids in the inbox (those already there are skipped: redelivery changes
 * nothing), and each new event's handler runs in order.
 *
 * A failing batch is split in halves until the failing event is alone; that
 * event is retried a bounded number of times with back-off and then parked
 * (the `parked_event` table with the reason, plus a DeadLetterParked event):
 * the events behind it keep flowing, for every tenant. An infrastructure
 * failure (database unreachable) is never a reason to park: the batch is
 * redelivered once the database answers. A message that breaks its contract
 * is parked at once. Ops re-drive parked events after a fix (`redrive`).
 */
export class InboxConsumer {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private readonly byTopic = new Map<string, EventHandler<any>>();
  private subscription?: Subscription;
  private redriveTimer?: NodeJS.Timeout;
  private stopping = false;
  /** Since when the current batch has been failing transiently (undefined: it is not). */
  private failingSince?: number;

  private readonly parking: Parking;
  private readonly applier: TransactionApplier;

  constructor(private readonly options: InboxConsumerOptions) {
    this.parking = new Parking(options);
    this.applier = new TransactionApplier(options);
    for (const h of options.handlers) {
      if (this.byTopic.has(h.event.topic)) throw new Error(`two handlers for ${h.event.topic} in ${options.name}`);
      this.byTopic.set(h.event.topic, h);
    }
  }

  get groupId(): string {
    return this.options.groupId ?? `tollgate.${this.options.name}`;
  }

  get name(): string {
    return this.options.name;
  }

  async start(): Promise<void> {
    this.stopping = false;
    this.subscription = await this.options.transport.subscribe({
      groupId: this.groupId,
      topics: [...this.byTopic.keys()],
      // Inbox deduplication makes reading from the start safe, and a new group never misses events.
      fromBeginning: true,
      ...(this.options.lingerMs ? { lingerMs: this.options.lingerMs } : {}),
      ...(this.options.maxBatchSize ? { maxBatchSize: this.options.maxBatchSize } : {}),
      ...(this.options.deferrable ? { deferrable: this.options.deferrable } : {}),
      ...(this.options.inline ? { applyInline: (messages: readonly DeliveredMessage[], manager: EntityManager, mode: InlineMode) => this.applyInline(messages, manager, mode), inlineTopics: this.options.inline } : {}),
      handleBatch: (messages) => this.onBatch(messages),
    });
    this.scheduleRedrive();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    if (this.redriveTimer) clearTimeout(this.redriveTimer);
    await this.subscription?.stop();
    this.subscription = undefined;
  }

  /** How many events of this consumer are parked and not re-driven successfully. */
  async parkedCount(): Promise<number> {
    const [r]: { n: number }[] = await this.options.dataSource.query(
      `SELECT count(*)::int AS n FROM "${this.options.schema}".parked_event WHERE consumer = $1 AND resolved_at IS NULL`, [this.options.name],
    );
    return r?.n ?? 0;
  }

  /** False while a batch has been failing transiently for more than DEGRADED_AFTER_MS (readiness says so). */
  isHealthy(): boolean {
    return this.failingSince === undefined || Date.now() - this.failingSince < DEGRADED_AFTER_MS;
  }

  /**
   * Messages a transaction of this process just appended, applied inside it (embedded mode, a consumer on the critical
   * path): its handlers commit with the producer's facts, each service still writing only its own tables. Under the
   * transport's savepoint (`together`) a failure is thrown to it; under this consumer's own (`each`) a failure rolls
   * back to it — the producer's facts stand — and leaves the messages to the normal delivery, with its retries and
   * parking. Work scheduled after commit waits for the outer one.
   */
  async applyInline(messages: readonly DeliveredMessage[], manager: EntityManager, mode: InlineMode): Promise<boolean> {
    const runner = manager.queryRunner;
    if (!runner?.isTransactionActive || this.stopping) return false;
    const items = this.decodeInline(messages);
    if (!items) return false;
    const after: Array<() => Promise<void> | void> = [];
    const apply = async () => {
      await this.applier.apply(manager, items, after);
      for (const fn of after) afterCommit(runner, () => void Promise.resolve(fn()).catch((err) => this.options.logger.error({ err }, 'after-commit step failed')));
    };
    if (mode === 'together') {
      await apply();
      return true;
    }
    await runner.startTransaction(); // a savepoint: TypeORM nests it, and the commit hand-off drops what it appended on rollback
    try {
      await apply();
      await runner.commitTransaction();
      return true;
    } catch (err) {
      await runner.rollbackTransaction();
      this.options.logger.debug({ err }, 'applying in the producer\'s transaction failed; left to the normal delivery');
      return false;
    }
  }

  /** The messages decoded for inline application; undefined when they are not all this consumer's to apply inline. */
  private decodeInline(messages: readonly DeliveredMessage[]): Decoded[] | undefined {
    const items: Decoded[] = [];
    for (const message of messages) {
      const handler = this.byTopic.get(message.topic);
      if (!handler) continue;
      if (!this.options.inline?.includes(message.topic)) return undefined; // all or nothing: the rest is handed on as usual
      try {
        items.push({ message, handler, ...decodeOnce(handler.event, message.value) });
      } catch {
        return undefined; // a message that breaks its contract is parked by the normal delivery
      }
    }
    return items.length > 0 ? items : undefined;
  }

  /** Visible for tests: handles delivered messages exactly as the subscription does. */
  async onBatch(messages: readonly DeliveredMessage[]): Promise<void> {
    const decoded: Decoded[] = [];
    for (const message of messages) {
      const handler = this.byTopic.get(message.topic);
      if (!handler) continue;
      try {
        decoded.push({ message, handler, ...decodeOnce(handler.event, message.value) });
      } catch (error) {
        if (!(error instanceof ContractViolationError)) throw error;
        await this.parking.park(message, handler, undefined, error.reasons);
      }
    }
    try {
      await this.applyAll(decoded, false);
    } catch (error) {
      if (!isTransientFailure(error) || !(await this.overTransientBudget())) throw error;
      // The database answers, yet this batch keeps failing "transiently": the failure is the batch's own.
      this.options.logger.warn({ err: error }, 'transient failure outlasted its budget while the database answers; treating it as the events\' own');
      await this.applyAll(decoded, true);
    }
    this.failingSince = undefined;
  }

  /** The transport redelivers a batch that failed transiently (with back-off); past the budget it is bounded. */
  private async overTransientBudget(): Promise<boolean> {
    const now = Date.now();
    this.failingSince ??= now;
    if (now - this.failingSince < (this.options.transientBudgetMs ?? TRANSIENT_BUDGET_MS)) return false;
    try {
      await this.options.dataSource.query('SELECT 1');
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Applies in one transaction; on failure splits in halves (order kept) until the failing event is alone. A transient
   * failure is thrown for the transport to redeliver, unless `bounded`: then it counts like any other.
   */
  private async applyAll(items: Decoded[], bounded: boolean): Promise<void> {
    if (items.length === 0) return;
    try {
      await this.applyTogether(items);
    } catch (error) {
      if (!bounded && isTransientFailure(error)) throw error;
      if (items.length === 1) return this.retryThenPark(items[0]!, error, bounded);
      const mid = Math.ceil(items.length / 2);
      await this.applyAll(items.slice(0, mid), bounded);
      await this.applyAll(items.slice(mid), bounded);
    }
  }

  private async retryThenPark(item: Decoded, firstError: unknown, bounded: boolean): Promise<void> {
    let error = firstError;
    const attempts = this.options.maxAttempts ?? 5;
    for (let attempt = 2; attempt <= attempts && !this.stopping; attempt++) {
      await new Promise((r) => setTimeout(r, retryDelayMs(attempt)));
      try {
        return await this.applyTogether([item]);
      } catch (e) {
        if (!bounded && isTransientFailure(e)) throw e;
        error = e;
      }
    }
    if (this.stopping) throw error;
    await this.parking.park(item.message, item.handler, item.envelope, [`handler failed ${attempts} times: ${describe(error)}`]);
  }

  private async applyTogether(items: Decoded[]): Promise<void> {
    const { dataSource } = this.options;
    const after: Array<() => Promise<void> | void> = [];
    let wroteOutbox = false;
    await dataSource.transaction(async (manager) => {
      await this.applier.apply(manager, items, after);
      wroteOutbox = OutboxWriter.wroteOutbox(manager);
    });
    this.options.logger.debug({ events: items.length }, 'batch applied');
    if (wroteOutbox) this.options.onOutboxWritten?.();
    for (const fn of after) {
      try {
        await fn();
      } catch (err) {
        this.options.logger.error({ err }, 'after-commit step failed');
      }
    }
  }




  /** Applies the parked events ops asked to re-drive (see Parking.redrive); how many were resolved. */
  redrive(): Promise<number> {
    return this.parking.redrive((topic) => this.byTopic.get(topic), () => this.stopping);
  }

  private scheduleRedrive(): void {
    if (this.stopping) return;
    this.redriveTimer = setTimeout(() => {
      void this.redrive()
        .then(() => this.parking.answersDue((topic) => this.byTopic.get(topic)))
        .catch((err) => this.options.logger.warn({ err }, 're-drive pass failed'))
        .finally(() => this.scheduleRedrive());
    }, this.options.redriveIntervalMs ?? 2000);
    this.redriveTimer.unref();
  }
}
