import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type EventDefinition, type EventEnvelope } from '@tollgate/contracts';
import { timelineRow } from '../projections/projection-rows';
import { LIVE, writeTimelineRows } from '../projections/projection-writer';

/** Appends one call-life event to the call's timeline (idempotent by event id). */
@Injectable()
export class RecordTimelineUseCase {
  async execute(manager: EntityManager, event: EventDefinition, envelope: EventEnvelope, intentId: string): Promise<void> {
    await writeTimelineRows(manager, LIVE, [timelineRow(event.topic, envelope, intentId)]);
  }

  /** A batch's call-life events, in one statement. */
  async executeAll(manager: EntityManager, events: readonly { topic: string; envelope: EventEnvelope; intentId: string }[]): Promise<void> {
    await writeTimelineRows(manager, LIVE, events.map((e) => timelineRow(e.topic, e.envelope, e.intentId)));
  }
}
