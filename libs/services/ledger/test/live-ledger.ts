import { type DataSource } from 'typeorm';
import { CallTimelineEvents, type EventDefinition } from '@tollgate/contracts';
import { type TopicEvent } from '@tollgate/testing';
import { ArchiveEventUseCase } from '../src/lib/archive-events/archive-event.usecase';
import { ProjectJournalUseCase } from '../src/lib/project-journal/project-journal.usecase';
import { RecordTimelineUseCase } from '../src/lib/record-timeline/record-timeline.usecase';

const CALL_LIFE = new Set<string>(CallTimelineEvents.map((e) => e.type));

/** What the ledger's consumer does with each event (LedgerEventsHost), in transactions of 25 events. */
export async function consumeLive(ds: DataSource, events: readonly TopicEvent[]): Promise<void> {
  const archive = new ArchiveEventUseCase();
  const timeline = new RecordTimelineUseCase();
  const journal = new ProjectJournalUseCase();
  for (let i = 0; i < events.length; i += 25) {
    await ds.transaction(async (m) => {
      for (const { topic, envelope } of events.slice(i, i + 25)) {
        await archive.append(m, topic, envelope);
        if (CALL_LIFE.has(envelope.type)) await timeline.execute(m, { topic } as EventDefinition, envelope, String(envelope.payload['intentId']));
        await journal.project(m, envelope, envelope.payload);
      }
    });
  }
}
