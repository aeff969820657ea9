import { type EntityManager } from 'typeorm';
import { buildEnvelope, type BuildEnvelopeOptions, produceEvent, type EventDefinition, type EventEnvelope, serviceEventsOf } from '@tollgate/contracts';
import { traceHeaders } from '@tollgate/observability';
import { EVENT_TRANSPORT, type EventTransport } from '../transport/event-transport';
import { rememberProduced } from '../inbox/decode-once';
import { isCallEventType } from '@tollgate/call-life';
import { select } from '@tollgate/persistence';
import { OUTBOX_CHANNEL, OUTBOX_EVENT } from './messaging-tables';
import { OUTBOX_LEASE_MS, PublishAfterCommit } from './publish-after-commit';

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
  private readonly direct?: PublishAfterCommit;

  constructor(
    private readonly schema: string,
    private readonly producer: string,
    private readonly transport?: EventTransport,
  ) {
    const declaration = serviceEventsOf(producer);
    if (declaration) this.declared = new Set(declaration.emits.map((e) => e.topic));
    if (transport && !transport.appendInTransaction) this.direct = new PublishAfterCommit(schema, transport);
  }

  /**
   * A notice that is not a fact (CallProgressed): published now, outside any transaction, with no outbox row — at most
   * once, lost if the broker is away. Never for anything a decision or the ledger depends on.
   */
  async publishNow<P extends object>(event: EventDefinition<P>, payload: P): Promise<void> {
    if (!this.transport) throw new Error('OutboxWriter.publishNow needs the transport');
    this.assertDeclared(event);
    if (isCallEventType(event.type)) throw new Error(`${event.type} is a fact of the call's life: write it with append, in its transaction`);
    const envelope = buildEnvelope(event, payload, { producer: this.producer });
    await this.transport.publish([{ topic: event.topic, key: envelope.key, value: JSON.stringify(envelope) }]);
  }

  private assertDeclared(event: EventDefinition<object>): void {
    if (this.declared && !this.declared.has(event.topic)) {
      throw new Error(`${this.producer} does not declare that it emits ${event.type} (libs/contracts service-events.ts)`);
    }
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
    this.assertDeclared(event);
    const { envelope, payload: validated } = produceEvent(event, payload, { ...options, producer: this.producer });
    // The W3C context of the span writing the event (none when tracing is off) travels in the message headers.
    const trace = traceHeaders();
    const headers = Object.keys(trace).length > 0 ? trace : undefined;
    if (this.transport?.appendInTransaction) {
      const value = JSON.stringify(envelope);
      await this.transport.appendInTransaction(manager, [{ topic: event.topic, key: envelope.key, value, ...(headers ? { headers } : {}) }]);
      // Its consumers in this process receive this very text after commit: validated once, here.
      rememberProduced(event, value, validated);
      return envelope;
    }
    if (this.direct && isCallEventType(event.type)) {
      await this.appendLeased(manager, envelope, event.topic, headers);
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

  /**
   * A call event, published by this process right after the commit (`PublishAfterCommit`): its row is leased, so the
   * relay is neither woken nor reads it unless the publish fails or the process dies first. Only call events: their
   * consumers fold them in any order (the call-life model), so a publish racing another commit's is harmless.
   */
  private async appendLeased(manager: EntityManager, envelope: EventEnvelope, topic: string, headers: Record<string, string> | undefined): Promise<void> {
    const value = JSON.stringify(envelope);
    const [row] = await select(manager, OUTBOX_EVENT, ['id'],
      `INSERT INTO "${this.schema}".outbox_event (event_id, topic, key, envelope, headers, leased_until) VALUES ($1, $2, $3, $4, $5, now() + $6 * interval '1 millisecond') RETURNING id`,
      [envelope.eventId, topic, envelope.key, value, headers ? JSON.stringify(headers) : null, OUTBOX_LEASE_MS]);
    this.direct!.register(manager.queryRunner!, row!.id, { topic, key: envelope.key, value, ...(headers ? { headers } : {}) });
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
