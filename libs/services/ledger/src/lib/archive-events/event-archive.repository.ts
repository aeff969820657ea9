import { type EntityManager } from 'typeorm';
import { col, defineTable, PLAN_EACH_RUN, select } from '@tollgate/persistence';
import { type ArchivedRow } from './hash-chain';

/** One lock for the whole chain: archiving transactions take turns (positions and links must not race). */
export const ARCHIVE_LOCK = 0x7a_c41e;

/** `ledger.event_archive`: one row per consumed event, hash-chained by position (append-only). */
export const EVENT_ARCHIVE = defineTable('ledger.event_archive', {
  position: col.bigint().required(),
  event_id: col.uuid().required(),
  topic: col.text().required(),
  type: col.text().required(),
  key: col.text().required(),
  occurred_at: col.timestamptz().required(),
  event_text: col.text().required(),
  prev_hash: col.text().required(),
  hash: col.text().required(),
  archived_at: col.timestamptz().required(),
});

/** The chain as read: positions as numbers (`::int` in the statement), and which events of a batch are archived already. */
const CHAIN_READ = defineTable('(archive read)', {
  ...EVENT_ARCHIVE.columns, position: col.integer().nullable(), hash: col.text().nullable(), archived: col.jsonb<string[]>().required(),
});

/** A row to append (positions and times as the archiver computed them). */
export interface EventArchiveRow {
  position: number;
  event_id: string;
  topic: string;
  type: string;
  key: string;
  occurred_at: string;
  event_text: string;
  prev_hash: string;
  hash: string;
}

type Executor = Pick<EntityManager, 'query'>;

/** One link of the chain, as `tollgate-ops archive at` shows it. */
export interface ArchiveLink { position: number; eventId: string; topic: string; type: string; hash: string; prevHash: string; archivedAt: Date }

/** The transactions that hold the chain lock already (it is a transaction-level lock: taken once per transaction). */
const locked = new WeakSet<object>();

/** Every statement that writes the archive. */
export const EventArchive = {
  /** The chain lock, taken once per transaction. */
  async lock(m: Executor): Promise<void> {
    if (locked.has(m)) return;
    await m.query('SELECT pg_advisory_xact_lock($1)', [ARCHIVE_LOCK]);
    locked.add(m);
  },

  /**
   * The chain's head, and which of these events are archived already (a redelivery), in one statement — planned on
   * every run: a generic plan made while the archive was small read all of it for the redelivery check.
   */
  async head(m: Executor, eventIds: readonly string[]): Promise<{ position: number | null; hash: string | null; archived: string[] }> {
    const [row] = await select(m, CHAIN_READ, ['position', 'hash', 'archived'],
      `${PLAN_EACH_RUN}SELECT (SELECT position FROM ledger.event_archive ORDER BY position DESC LIMIT 1)::int AS position,
              (SELECT hash FROM ledger.event_archive ORDER BY position DESC LIMIT 1) AS hash,
              (SELECT coalesce(jsonb_agg(event_id::text), '[]') FROM ledger.event_archive WHERE event_id = ANY($1::uuid[])) AS archived`, [eventIds]);
    return row!;
  },

  async insert(m: Executor, rows: readonly EventArchiveRow[]): Promise<void> {
    if (rows.length === 0) return;
    await m.query(
      `INSERT INTO ledger.event_archive (position, event_id, topic, type, key, occurred_at, event_text, prev_hash, hash)
       SELECT * FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::text[], $8::text[], $9::text[])`,
      [rows.map((r) => r.position), rows.map((r) => r.event_id), rows.map((r) => r.topic), rows.map((r) => r.type), rows.map((r) => r.key),
        rows.map((r) => r.occurred_at), rows.map((r) => r.event_text), rows.map((r) => r.prev_hash), rows.map((r) => r.hash)]);
  },

  /** A page of the chain after `position`, in position order (for verification). */
  async pageAfter(db: Executor, position: number, size: number): Promise<ArchivedRow[]> {
    const rows = await select(db, CHAIN_READ, ['position', 'event_text', 'prev_hash', 'hash'],
      'SELECT position::int AS position, event_text, prev_hash, hash FROM ledger.event_archive WHERE position > $1 ORDER BY position LIMIT $2', [position, size]);
    return rows.map((r) => ({ position: r.position!, eventText: r.event_text, prevHash: r.prev_hash, hash: r.hash! }));
  },

  /** One link of the chain, as ops shows it. */
  async linkAt(db: Executor, position: number): Promise<ArchiveLink | undefined> {
    const [r] = await select(db, CHAIN_READ, ['position', 'event_id', 'topic', 'type', 'hash', 'prev_hash', 'archived_at'],
      'SELECT position::int AS position, event_id, topic, type, hash, prev_hash, archived_at FROM ledger.event_archive WHERE position = $1', [position]);
    return r && { position: r.position!, eventId: r.event_id, topic: r.topic, type: r.type, hash: r.hash!, prevHash: r.prev_hash, archivedAt: r.archived_at };
  },
};
