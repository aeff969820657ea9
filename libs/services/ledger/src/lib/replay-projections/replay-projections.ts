import { type DataSource, type EntityManager } from 'typeorm';
import { type ProjectionTarget, writeJournalRows, writeTimelineRows } from '../projections/projection-writer';
import { ARCHIVE_LOCK } from '../archive-events/archive-event.usecase';
import { archiveRange, readArchive } from './archive-source';
import { type TopicHistory } from '@tollgate/messaging';
import { decodeTopicBatches } from './topic-source';
import { type ReplayedEvent, rowsOfBatch } from './replayed-event';
import { createShadowTables, indexShadowTables, type ProjectionName, SHADOW, swapShadowTables } from './shadow-tables';
import { diffProjections, type ProjectionDiff } from './projection-diff';

export const SHADOW_TARGET: ProjectionTarget = { schema: SHADOW, rollUp: true };

export interface ReplayProgress { events: number; total: number }

export interface ReplaySummary {
  events: number;
  /** The last archive position the shadow reflects (caught up again by verify and swap). */
  archiveHead: number;
  seconds: number;
  eventsPerSecond: number;
}

/** Writes one batch of events' projection rows into the shadow tables (one statement per table). */
export async function applyBatch(manager: EntityManager, events: readonly ReplayedEvent[], target: ProjectionTarget = SHADOW_TARGET): Promise<void> {
  const rows = rowsOfBatch(events);
  await writeTimelineRows(manager, target, rows.timeline, rows.timelineAt as string[]);
  await writeJournalRows(manager, target, rows.journal, rows.journalAt as string[]);
}

/**
 * The same on two connections at once — the timeline and the journal are separate tables, and a shadow being built
 * is nobody's live state (a replay that stops is started again), so the two writes need not share a transaction.
 */
async function applyBatchSideBySide(ds: DataSource, events: readonly ReplayedEvent[]): Promise<void> {
  const rows = rowsOfBatch(events);
  await Promise.all([
    ds.transaction((m) => writeTimelineRows(m, SHADOW_TARGET, rows.timeline, rows.timelineAt as string[])),
    ds.transaction((m) => writeJournalRows(m, SHADOW_TARGET, rows.journal, rows.journalAt as string[])),
  ]);
}

/**
 * Ops replay: rebuilds the ledger's projections into shadow tables from a source of events, and
 * then — on request — compares them with the live ones row by row and makes them live. Seeding: a replay that starts
 * past the beginning first copies the live rows of the events before its start, so "from a point" rebuilds only what
 * came after it. Every write is idempotent by event and posting id, so reading an event twice (a catch-up overlapping
 * the replay) changes nothing.
 */
export class ReplayProjections {
  constructor(private readonly ds: DataSource) {}

  /** An empty shadow schema, seeded with the live rows of every event archived before `fromPosition`. */
  async prepare(fromPosition: number): Promise<void> {
    await this.ds.transaction(async (m) => {
      await createShadowTables(m);
      if (fromPosition <= 1) return;
      const before = `SELECT event_id FROM ledger.event_archive WHERE position < ${Number(fromPosition)}`;
      await m.query(`INSERT INTO ${SHADOW}.timeline_entry SELECT * FROM ledger.timeline_entry WHERE event_id IN (${before})`);
      await m.query(`INSERT INTO ${SHADOW}.journal_entry (posting_id, seq, kind, intent_id, account, asset, amount, occurred_at, event_id, recorded_at)
        SELECT posting_id, seq, kind, intent_id, account, asset, amount, occurred_at, event_id, recorded_at FROM ledger.journal_entry WHERE event_id IN (${before})`);
      await m.query(`INSERT INTO ${SHADOW}.journal_day (account, asset, day, delta)
        SELECT account, asset, (occurred_at AT TIME ZONE 'UTC')::date, sum(amount) FROM ${SHADOW}.journal_entry GROUP BY 1, 2, 3`);
    });
  }

  /** Applies every batch of `source` to the shadow tables, one transaction per batch, reporting progress. */
  async apply(source: AsyncIterable<ReplayedEvent[]>, onProgress: (events: number) => void = () => undefined, total = 0): Promise<number> {
    let events = 0;
    for await (const batch of readAhead(source)) {
      await applyBatchSideBySide(this.ds, batch);
      events += batch.length;
      onProgress(events);
      await this.ds.query(`UPDATE ${SHADOW}.progress SET events = $1::bigint, total = GREATEST($2::bigint, $1::bigint), updated_at = now()`, [events, total]);
    }
    await this.ds.transaction((m) => indexShadowTables(m));
    return events;
  }

  /** Replays the archive from a position or a time to its current head into fresh shadow tables. */
  async fromArchive(from: { position?: number; time?: Date }, onProgress: (p: ReplayProgress) => void = () => undefined): Promise<ReplaySummary> {
    const range = await archiveRange(this.ds, from);
    const started = performance.now();
    await this.prepare(range.fromPosition);
    const total = Math.max(0, range.toPosition - range.fromPosition + 1);
    const events = await this.apply(readArchive(this.ds, range), (n) => onProgress({ events: n, total }), total);
    const seconds = (performance.now() - started) / 1000;
    return { events, archiveHead: range.toPosition, seconds, eventsPerSecond: Math.round(events / Math.max(seconds, 1e-6)) };
  }

  /**
   * Replays topic history (Kafka, or the embedded log) into fresh shadow tables. Rows get the replay's time as their
   * recorded time (verify with `ignoreRecordedAt`); catch-up before verify and swap starts at the archive head seen
   * before the read, so anything the live ledger consumed meanwhile is included.
   */
  async fromTopics(history: TopicHistory, onProgress: (p: ReplayProgress) => void = () => undefined): Promise<ReplaySummary & { refused: number }> {
    const [{ head }] = await this.ds.query('SELECT COALESCE(max(position), 0)::int AS head FROM ledger.event_archive');
    const started = performance.now();
    await this.prepare(1);
    const refused = { count: 0 };
    let read = 0;
    const events = await this.apply(decodeTopicBatches(counting(history.batches, (n) => (read += n)), refused), () => onProgress({ events: read, total: history.total }), history.total);
    const seconds = (performance.now() - started) / 1000;
    return { events, archiveHead: head, seconds, eventsPerSecond: Math.round(read / Math.max(seconds, 1e-6)), refused: refused.count };
  }

  /** Applies what the archive gained after `afterPosition` (idempotent: overlap is harmless). */
  private async catchUp(m: EntityManager, afterPosition: number): Promise<number> {
    const [{ head }] = await m.query('SELECT COALESCE(max(position), 0)::int AS head FROM ledger.event_archive');
    for await (const batch of readArchive(m, { fromPosition: afterPosition + 1, toPosition: head })) await applyBatch(m, batch);
    return head;
  }

  /**
   * Compares the shadow with the live projections at one consistent moment: in a repeatable-read snapshot the shadow
   * is first caught up to the archive head that snapshot sees, then every row is compared by hash.
   */
  async verify(projections: readonly ProjectionName[], afterPosition: number, opts: { ignoreRecordedAt?: boolean } = {}): Promise<ProjectionDiff[]> {
    const runner = this.ds.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction('REPEATABLE READ');
      await runner.query('SELECT 1 FROM ledger.event_archive LIMIT 1'); // take the snapshot
      await this.catchUp(runner.manager, afterPosition);
      const diffs = await diffProjections(runner.manager, projections, opts);
      await runner.commitTransaction();
      return diffs;
    } catch (e) {
      await runner.rollbackTransaction();
      throw e;
    } finally {
      await runner.release();
    }
  }

  /**
   * Makes the rebuilt projections live atomically: the archive's lock stops the live consumer between two
   * transactions, the shadow catches up to the head, the tables swap, and the consumer resumes on the new tables.
   */
  async swap(projections: readonly ProjectionName[], afterPosition: number): Promise<number> {
    return this.ds.transaction(async (m) => {
      await m.query('SELECT pg_advisory_xact_lock($1)', [ARCHIVE_LOCK]);
      const head = await this.catchUp(m, afterPosition);
      await swapShadowTables(m, projections);
      return head;
    });
  }
}

async function* counting<T>(batches: AsyncIterable<T[]>, add: (n: number) => void): AsyncGenerator<T[]> {
  for await (const batch of batches) {
    add(batch.length);
    yield batch;
  }
}

/** Fetches the next batch while the current one is written (reading and writing overlap). */
async function* readAhead<T>(source: AsyncIterable<T>): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  let next = it.next();
  for (;;) {
    const current = await next;
    if (current.done) return;
    next = it.next();
    next.catch(() => undefined); // a read failing while this batch is written is reported at the next await, not as unhandled
    yield current.value;
  }
}
