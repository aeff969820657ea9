import { type EntityManager } from 'typeorm';
import { buildEnvelope, type BuildEnvelopeOptions, type EventDefinition, type EventEnvelope } from '@tollgate/contracts';
import { OUTBOX_CHANNEL } from './messaging-tables';

/**
 * Writes events into the service's outbox inside the caller's transaction, so
 * the state change and its events commit or roll back together. Payloads are
 * validated here, at produce time; an invalid one throws and aborts the
 * transaction.
 */
export class OutboxWriter {
  constructor(
    private readonly schema: string,
    private readonly producer: string,
  ) {}

  async append<P extends object>(
    manager: EntityManager,
    event: EventDefinition<P>,
    payload: P,
    options: Omit<BuildEnvelopeOptions, 'producer'> = {},
  ): Promise<EventEnvelope> {
    if (!manager.queryRunner?.isTransactionActive) {
      throw new Error('OutboxWriter.append must run inside a transaction');
    }
    const envelope = buildEnvelope(event, payload, { ...options, producer: this.producer });
    await manager.query(
      `INSERT INTO "${this.schema}".outbox_event (event_id, topic, key, envelope) VALUES ($1, $2, $3, $4)`,
      [envelope.eventId, event.topic, envelope.key, JSON.stringify(envelope)],
    );
    // Delivered by PostgreSQL only when (and if) the transaction commits: wakes the relay at once.
    await manager.query('SELECT pg_notify($1, $2)', [OUTBOX_CHANNEL, this.schema]);
    return envelope;
  }
}
