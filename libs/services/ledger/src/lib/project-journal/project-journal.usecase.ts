import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type EventEnvelope } from '@tollgate/contracts';
import { journalRows } from '../projections/projection-rows';
import { LIVE, writeJournalRows } from '../projections/projection-writer';

/**
 * Books each money event into the finance journal (`projections/projection-rows.ts` says what it books), from events
 * that carry what each service booked (the owner side from payment's events, the provider side from settlement's), so
 * the projection and the services' own books cannot disagree. Redelivery and replay change nothing.
 */
@Injectable()
export class ProjectJournalUseCase {
  /** Books the event if it moves money (a no-op for every other event); `payload` was validated against its type on consume. */
  project(manager: EntityManager, e: EventEnvelope, payload: object): Promise<void> {
    return writeJournalRows(manager, LIVE, journalRows(e, payload));
  }

  /** A batch's events, booked in one statement. */
  projectAll(manager: EntityManager, events: readonly { envelope: EventEnvelope; payload: object }[]): Promise<void> {
    return writeJournalRows(manager, LIVE, events.flatMap((e) => journalRows(e.envelope, e.payload)));
  }
}
