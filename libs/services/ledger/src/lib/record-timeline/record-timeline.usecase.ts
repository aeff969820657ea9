import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { CallTimelineEvents, type EventDefinition, type EventEnvelope } from '@tollgate/contracts';
import { timelineRow } from '../projections/projection-rows';
import { LIVE, writeTimelineRows } from '../projections/projection-writer';

/** The events a call's timeline shows. */
const ON_THE_TIMELINE = new Set<string>(CallTimelineEvents.map((e) => e.type));

/** Appends one call-life event to the call's timeline (idempotent by event id). */
@Injectable()
export class RecordTimelineUseCase {
  async execute(manager: EntityManager, event: EventDefinition, envelope: EventEnvelope, intentId: string): Promise<void> {
    await writeTimelineRows(manager, LIVE, [timelineRow(event.topic, envelope, intentId)]);
  }

  /** The call-life events of a batch of the ledger's events (the others are on no timeline), in one statement. */
  async executeAll(manager: EntityManager, events: readonly { type: string; topic: string; envelope: EventEnvelope; payload: unknown }[]): Promise<void> {
    const rows = [];
    for (const e of events) if (ON_THE_TIMELINE.has(e.type)) rows.push(timelineRow(e.topic, e.envelope, (e.payload as { intentId: string }).intentId));
    await writeTimelineRows(manager, LIVE, rows);
  }
}
