import { type DataSource } from 'typeorm';
import { type Logger } from 'pino';
import { type Deferrable, type EventTransport } from './transport/event-transport';
import { OutboxRelay } from './outbox/outbox-relay';
import { OutboxWriter } from './outbox/outbox-writer';
import { type BatchApplier, type EventHandler, InboxConsumer } from './inbox/event-consumer';
import { DEFAULT_MESSAGING_RETENTION, type MessagingRetention, pruneMessagingTables, scheduleRetention } from './retention/messaging-retention';
import { drainCommands } from './workflow/commands';
import { type DueWork } from './workflow/due-work';

export interface ServiceMessagingOptions {
  service: string;
  schema: string;
  dataSource: DataSource;
  databaseUrl: string;
  transport: EventTransport;
  logger: Logger;
  pollIntervalMs: number;
  consumers: ConsumerDeclaration[];
  /** How long published outbox rows and inbox rows are kept; defaults to 1 day and 7 days. */
  retention?: MessagingRetention;
}

/** One consumer of a service: its stable name, its handlers, and `lingerMs` when it is off the critical path. */
export interface ConsumerDeclaration {
  // Handlers for different payload types share one list.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  name: string; handlers: EventHandler<any>[]; lingerMs?: number; maxBatchSize?: number; applyBatch?: BatchApplier; dedupedByModel?: boolean;
  /** On the critical path: events of these topics alone may wait a little for the ones the consumer acts on. */
  deferrable?: Deferrable;
  /** On the critical path: in embedded mode, events of these topics are applied inside the transaction that appended them (see SubscribeOptions.applyInline). */
  inline?: readonly string[];
  /** Due work the runner delivers besides the events (scheduled wake-ups of calls), started and stopped with the consumers. */
  due?: DueWork;
}

/**
 * Everything one service needs to talk through events: its outbox writer, the
 * relay that publishes it, and its inbox consumers, started and stopped in
 * the right order (relay first on start; consumers first on stop, then a
 * final outbox flush, so in-flight work is finished and published).
 */
export class ServiceMessaging {
  readonly outbox: OutboxWriter;
  readonly relay: OutboxRelay;
  readonly consumers: InboxConsumer[];
  private retention?: { stop(): void };

  constructor(private readonly options: ServiceMessagingOptions) {
    this.outbox = new OutboxWriter(options.schema, options.service, options.transport);
    this.relay = new OutboxRelay({
      schema: options.schema,
      dataSource: options.dataSource,
      databaseUrl: options.databaseUrl,
      transport: options.transport,
      logger: options.logger.child({ component: 'outbox-relay' }),
      pollIntervalMs: options.pollIntervalMs,
    });
    this.consumers = options.consumers.map(
      (c) =>
        new InboxConsumer({
          name: c.name,
          producer: options.service,
          schema: options.schema,
          dataSource: options.dataSource,
          transport: options.transport,
          logger: options.logger.child({ component: 'consumer', consumer: c.name }),
          handlers: c.handlers,
          ...(c.lingerMs ? { lingerMs: c.lingerMs } : {}),
          ...(c.maxBatchSize ? { maxBatchSize: c.maxBatchSize } : {}),
          ...(c.deferrable ? { deferrable: c.deferrable } : {}),
          ...(c.inline ? { inline: c.inline } : {}),
          ...(c.applyBatch ? { applyBatch: c.applyBatch } : {}),
          ...(c.dedupedByModel ? { dedupedByModel: true } : {}),
          // Latency: the relay drains right after a batch that wrote outbox rows commits, instead of waiting for
          // NOTIFY (which stays the fallback); a batch that wrote none (or wrote straight to the log) wakes nothing.
          onOutboxWritten: () => this.relay.wake(),
          outbox: this.outbox,
        }),
    );
  }

  async start(): Promise<void> {
    await this.relay.start();
    await Promise.all(this.consumers.map((c) => c.start()));
    for (const c of this.options.consumers) c.due?.start();
    const retention = this.options.retention ?? DEFAULT_MESSAGING_RETENTION;
    this.retention = scheduleRetention(`${this.options.schema} outbox/inbox`, retention.intervalMs,
      () => pruneMessagingTables(this.options.dataSource, this.options.schema, retention), this.options.logger);
  }

  /**
   * A graceful stop: no due work and no new events are taken, the commands the runner started finish (their results are recorded and
   * their events written), then the outbox is flushed.
   */
  async stop(): Promise<void> {
    this.retention?.stop();
    await Promise.all(this.options.consumers.map((c) => c.due?.stop()));
    await Promise.all(this.consumers.map((c) => c.stop()));
    await drainCommands();
    await this.relay.stop();
  }

  /** Events parked by this service's consumers and not yet re-driven. */
  async parkedCount(): Promise<number> {
    return (await Promise.all(this.consumers.map((c) => c.parkedCount()))).reduce((a, b) => a + b, 0);
  }

  isReady(): boolean {
    const parts = this.readiness();
    return parts.relay && parts.transport && parts.consumers;
  }

  /** The three parts of `isReady`, reported one by one so a service that is not ready says which part is down. */
  readiness(): { relay: boolean; transport: boolean; consumers: boolean } {
    return { relay: this.relay.isReady(), transport: this.options.transport.isReady(), consumers: this.consumers.every((c) => c.isHealthy()) };
  }
}
