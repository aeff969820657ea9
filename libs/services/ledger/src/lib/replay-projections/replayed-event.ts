import { CallTimelineEvents, type EventEnvelope, MoneyEvents } from '@tollgate/contracts';
import { journalRows, type JournalRow, timelineRow, type TimelineRow } from '../projections/projection-rows';

/** One event as a replay reads it, from the archive or from a topic. */
export interface ReplayedEvent {
  topic: string;
  envelope: EventEnvelope;
  /** When the live ledger recorded it (the archive's time); absent when read from a topic. */
  recordedAt?: string;
}

const CALL_LIFE = new Set<string>(CallTimelineEvents.map((e) => e.type));
const CONSUMED = new Set<string>([...CALL_LIFE, ...MoneyEvents.map((e) => e.type)]);

/** The projection rows of a batch of events, as the live consumer writes them (pure; events the ledger does not consume add nothing). */
export function rowsOfBatch(events: readonly ReplayedEvent[]): { timeline: TimelineRow[]; timelineAt: (string | null)[]; journal: JournalRow[]; journalAt: (string | null)[] } {
  const out = { timeline: [] as TimelineRow[], timelineAt: [] as (string | null)[], journal: [] as JournalRow[], journalAt: [] as (string | null)[] };
  for (const e of events) {
    const { envelope } = e;
    if (!CONSUMED.has(envelope.type)) continue;
    if (CALL_LIFE.has(envelope.type)) {
      out.timeline.push(timelineRow(e.topic, envelope, String((envelope.payload as { intentId: string }).intentId)));
      out.timelineAt.push(e.recordedAt ?? null);
    }
    for (const row of journalRows(envelope, envelope.payload)) {
      out.journal.push(row);
      out.journalAt.push(e.recordedAt ?? null);
    }
  }
  return out;
}
