import { type DataSource, type EntityManager } from 'typeorm';
import { type Logger } from 'pino';
import {
  buildEnvelope,
  ContractViolationError,
  DeadLetterParked,
  decodeEnvelope,
  type EventDefinition,
  type EventEnvelope,
} from '@tollgate/contracts';
import { withLogContext } from '@tollgate/observability';
import { type DeliveredMessage, type EventTransport, type Subscription } from '../transport/event-transport';

export interface HandleContext<P> {
  payload: P;
  envelope: EventEnvelope;
  /** The transaction that also records the event in the inbox: write the effect through it. */
  manager: EntityManager;
  /**
   * Runs `fn` once the transaction has committed (e.g. I/O to a provider, waking a waiting request).
   * It is not retried: anything that must survive a crash is recorded in the transaction first.
   */
  afterCommit(fn: () => Promise<void> | void): void;
}

export interface EventHandler<P extends object = object> {
  event: EventDefinition<P>;
  handle(ctx: HandleContext<P>): Promise<void>;
}

/** A typed handler for one event: `on(PaymentHeld, async ({ payload, manager }) => ...)`. */
export function on<P extends object>(event: EventDefinition<P>, handle: (ctx: HandleContext<P>) => Promise<void>): EventHandler<P> {
  return { event, handle };
}

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
  /** Override the Kafka group (e.g. to re-read a topic from offset 0); the inbox still deduplicates by `name`. */
  groupId?: string;
  /** Called after each applied event's commit: the service's relay publishes what the handler wrote at once. */
  onApplied?: () => void;
}

/**
 * Consumes events for one service: validates each payload against its
 * contract, applies the handler and records the event id in the inbox in ONE
 * transaction, so a redelivered event changes nothing. A message that breaks
 * its contract is parked on the dead-letter topic with the reasons and the
 * events behind it keep flowing.
 */
export class InboxConsumer {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private readonly byTopic = new Map<string, EventHandler<any>>();
  private subscription?: Subscription;

  constructor(private readonly options: InboxConsumerOptions) {
    for (const h of options.handlers) {
      if (this.byTopic.has(h.event.topic)) throw new Error(`two handlers for ${h.event.topic} in ${options.name}`);
      this.byTopic.set(h.event.topic, h);
    }
  }

  get groupId(): string {
    return this.options.groupId ?? `tollgate.${this.options.name}`;
  }

  async start(): Promise<void> {
    this.subscription = await this.options.transport.subscribe({
      groupId: this.groupId,
      topics: [...this.byTopic.keys()],
      // Inbox deduplication makes reading from the start safe, and a new group never misses events.
      fromBeginning: true,
      handle: (m) => this.onMessage(m),
    });
  }

  async stop(): Promise<void> {
    await this.subscription?.stop();
    this.subscription = undefined;
  }

  /** Visible for tests: handles one delivered message exactly as the subscription does. */
  async onMessage(message: DeliveredMessage): Promise<void> {
    const handler = this.byTopic.get(message.topic);
    if (!handler) return;
    let decoded: { envelope: EventEnvelope; payload: object };
    try {
      decoded = decodeEnvelope(handler.event, message.value);
    } catch (error) {
      if (error instanceof ContractViolationError) return this.park(message, error.reasons);
      throw error;
    }
    const intentId = (decoded.payload as { intentId?: unknown }).intentId;
    await withLogContext(typeof intentId === 'string' ? { intentId } : {}, () => this.apply(handler, message, decoded));
  }

  private async apply(handler: EventHandler<object>, message: DeliveredMessage, decoded: { envelope: EventEnvelope; payload: object }): Promise<void> {
    const { dataSource, schema, logger, name } = this.options;
    const after: Array<() => Promise<void> | void> = [];
    const applied = await dataSource.transaction(async (manager) => {
      const inserted: unknown[] = await manager.query(
        `INSERT INTO "${schema}".inbox_event (consumer, event_id, topic, partition, "offset")
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING RETURNING event_id`,
        [name, decoded.envelope.eventId, message.topic, message.partition, message.offset],
      );
      if (inserted.length === 0) return false;
      await handler.handle({ payload: decoded.payload, envelope: decoded.envelope, manager, afterCommit: (fn) => after.push(fn) });
      return true;
    });
    if (!applied) {
      logger.debug({ eventId: decoded.envelope.eventId, type: decoded.envelope.type }, 'duplicate event skipped');
      return;
    }
    logger.debug({ eventId: decoded.envelope.eventId, type: decoded.envelope.type }, 'event applied');
    this.options.onApplied?.();
    for (const fn of after) {
      try {
        await fn();
      } catch (err) {
        logger.error({ err, eventId: decoded.envelope.eventId }, 'after-commit step failed');
      }
    }
  }

  private async park(message: DeliveredMessage, reasons: string[]): Promise<void> {
    const { transport, logger, name, producer } = this.options;
    const envelope = buildEnvelope(
      DeadLetterParked,
      { consumer: name, sourceTopic: message.topic, partition: message.partition, offset: message.offset, key: message.key, reasons, value: message.value.slice(0, 100_000) },
      { producer },
    );
    await transport.publish([{ topic: DeadLetterParked.topic, key: envelope.key, value: JSON.stringify(envelope) }]);
    logger.warn({ topic: message.topic, partition: message.partition, offset: message.offset, reasons }, 'invalid event parked on the dead-letter topic');
  }
}
