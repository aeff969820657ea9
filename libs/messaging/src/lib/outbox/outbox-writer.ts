import { type EntityManager } from 'typeorm';
import { buildEnvelope, type BuildEnvelopeOptions, type EventDefinition, type EventEnvelope, serviceEventsOf } from '@tollgate/contracts';
import { traceHeaders } from '@tollgate/observability';
import { EVENT_TRANSPORT, type EventTransport } from '../transport/event-transport';
import { rememberProduced } from '../inbox/decode-once';
import { OUTBOX_CHANNEL } from './messaging-tables';

/** Set on a transaction's query runner once it wrote to the outbox table: only then has the relay anything to publish. */
const OUTBOX_WRITTEN = 'tollgateOutboxWritten';

/**
 * Writes events inside the caller's transaction, so the state change and its
 * events commit or roll back together. Payloads are validated here, at
 * produce time; an invalid one throws and aborts the transaction.
 *
 * Where the transport's log lives in the same database (the embedded mode),
 * the event is appended to that log directly, in the transaction: durable
 * exactly when the state change commits, with no outbox row and no relay.
 * Otherwise it goes to the service's outbox table, which the relay publishes.
 */
export class OutboxWriter {
  private readonly declared?: ReadonlySet<string>;

  constructor(
    private readonly schema: string,
    private readonly producer: string,
    private readonly transport?: EventTransport,
  ) {
    const declaration = serviceEventsOf(producer);
    if (declaration) this.declared = new Set(declaration.emits.map((e) => e.topic));
  }

  async append<P extends object>(
    manager: EntityManager,
    event: EventDefinition<P>,
    payload: P,
    options: Omit<BuildEnvelopeOptions, 'producer'> = {},
  ): Promise<EventEnvelope> {
    if (!manager.queryRunner?.isTransactionActive) {
      throw new Error('OutboxWriter.append must run inside a transaction');
    }
    if (this.declared && !this.declared.has(event.topic)) {
      throw new Error(`${this.producer} does not declare that it emits ${event.type} (libs/contracts service-events.ts)`);
    }
    const envelope = buildEnvelope(event, payload, { ...options, producer: this.producer });
    // The W3C context of the span writing the event (none when tracing is off) travels in the message headers.
    const trace = traceHeaders();
    const headers = Object.keys(trace).length > 0 ? trace : undefined;
    if (this.transport?.appendInTransaction) {
      const value = JSON.stringify(envelope);
      await this.transport.appendInTransaction(manager, [{ topic: event.topic, key: envelope.key, value, ...(headers ? { headers } : {}) }]);
      // Its consumers in this process receive this very text after commit: validated once, here.
      rememberProduced(event, value);
      return envelope;
    }
    // One statement: the row, and the NOTIFY PostgreSQL delivers only when (and if) the transaction commits, which wakes the relay.
    await manager.query(
      `WITH ins AS (INSERT INTO "${this.schema}".outbox_event (event_id, topic, key, envelope, headers) VALUES ($1, $2, $3, $4, $7) RETURNING 1)
       SELECT pg_notify($5, $6) FROM ins`,
      [envelope.eventId, event.topic, envelope.key, JSON.stringify(envelope), OUTBOX_CHANNEL, this.schema, headers ? JSON.stringify(headers) : null],
    );
    manager.queryRunner.data = { ...(manager.queryRunner.data ?? {}), [OUTBOX_WRITTEN]: true };
    return envelope;
  }

  /** Whether this transaction left rows for the relay (read before it is released). */
  static wroteOutbox(manager: EntityManager): boolean {
    return manager.queryRunner?.data?.[OUTBOX_WRITTEN] === true;
  }
}

/** The Nest provider of a service's outbox writer, bound to the process's transport. */
export function outboxWriterProvider(token: symbol, service: string) {
  return { provide: token, useFactory: (transport: EventTransport) => new OutboxWriter(service, service, transport), inject: [EVENT_TRANSPORT] };
}
