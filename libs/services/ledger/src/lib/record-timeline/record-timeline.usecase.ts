import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type EventDefinition, type EventEnvelope } from '@tollgate/contracts';

/** Appends one call-life event to the call's timeline (idempotent by event id). */
@Injectable()
export class RecordTimelineUseCase {
  async execute(manager: EntityManager, event: EventDefinition, envelope: EventEnvelope, intentId: string): Promise<void> {
    await manager.query(
      `INSERT INTO ledger.timeline_entry (event_id, intent_id, type, producer, topic, occurred_at, payload)
       VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (event_id) DO NOTHING`,
      [envelope.eventId, intentId, envelope.type, envelope.producer, event.topic, envelope.occurredAt, JSON.stringify(envelope.payload)],
    );
  }
}
