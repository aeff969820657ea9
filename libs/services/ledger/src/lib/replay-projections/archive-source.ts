import { type EntityManager } from 'typeorm';
import { type EventEnvelope } from '@tollgate/contracts';
import { col, defineTable, select } from '@tollgate/persistence';
import { type ArchivedRow, type ChainCursor, GENESIS, verifyPage } from '../archive-events/hash-chain';
import { type ReplayedEvent } from './replayed-event';

const PAGE = 5000;

/** A DataSource, or an EntityManager inside a transaction (its snapshot). */
export type Queryable = Pick<EntityManager, 'query'>;

export interface ArchiveRange {
  /** The first position to read (1 = from the start). */
  fromPosition: number;
  /** The last position to read (the archive's head when the replay starts). */
  toPosition: number;
}

/** The archive as a replay reads it (positions as numbers: `::int`; the time as ISO text). */
const PAGE_ROW = defineTable('(archive page)', {
  position: col.integer().required(), topic: col.text().required(), event_text: col.text().required(), prev_hash: col.text().required(), hash: col.text().required(),
  recorded_at: col.text().required(),
});
const BOUND = defineTable('(archive bound)', { p: col.text().required(), hash: col.text().required() });

/** Where a replay from the archive starts: a position, or the first event archived at or after a time. */
export async function archiveRange(ds: Queryable, from: { position?: number; time?: Date }): Promise<ArchiveRange> {
  const [top] = await select(ds, BOUND, ['p'], 'SELECT COALESCE(max(position), 0)::bigint::text AS p FROM ledger.event_archive');
  const head = top!.p;
  let fromPosition = from.position ?? 1;
  if (from.time) {
    const [row] = await select(ds, BOUND, ['p'], 'SELECT COALESCE(min(position), $2::bigint + 1)::text AS p FROM ledger.event_archive WHERE archived_at >= $1', [from.time, head]);
    fromPosition = Number(row!.p);
  }
  return { fromPosition: Math.max(1, fromPosition), toPosition: Number(head) };
}

/**
 * Reads the archive in position order, a page at a time, checking every hash on the way: a replay never builds from a
 * tampered or gapped archive (it stops with the position). Yields the events of each page.
 */
export async function* readArchive(ds: Queryable, range: ArchiveRange): AsyncGenerator<ReplayedEvent[]> {
  let at: ChainCursor = { position: range.fromPosition - 1, hash: GENESIS };
  if (range.fromPosition > 1) {
    const [prev] = await select(ds, BOUND, ['hash'], 'SELECT hash FROM ledger.event_archive WHERE position = $1', [range.fromPosition - 1]);
    at = { position: range.fromPosition - 1, hash: prev?.hash ?? GENESIS };
  }
  while (at.position < range.toPosition) {
    const rows = (await select(ds, PAGE_ROW, ['position', 'topic', 'event_text', 'prev_hash', 'hash', 'recorded_at'],
      `SELECT position::int AS position, topic, event_text, prev_hash, hash,
              to_char(archived_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS recorded_at
         FROM ledger.event_archive WHERE position > $1 AND position <= $2 ORDER BY position LIMIT ${PAGE}`, [at.position, range.toPosition]))
      .map((r): ArchivedRow & { topic: string; recordedAt: string } => ({ position: r.position, topic: r.topic, eventText: r.event_text, prevHash: r.prev_hash, hash: r.hash, recordedAt: r.recorded_at }));
    if (rows.length === 0) return;
    const checked = verifyPage(rows, at);
    if (!checked.ok) throw new Error(`the archive does not verify at position ${checked.problem.position} (${checked.problem.kind}); run \`tollgate-ops archive verify\``);
    at = checked.at;
    yield rows.map((r) => ({ topic: r.topic, envelope: JSON.parse(r.eventText) as EventEnvelope, recordedAt: r.recordedAt }));
  }
}
