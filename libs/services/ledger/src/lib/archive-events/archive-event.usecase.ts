import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { canonicalJson, type EventEnvelope } from '@tollgate/contracts';
import { chainHash, GENESIS } from './hash-chain';

/** One lock for the whole chain: archiving transactions take turns (positions and links must not race). */
export const ARCHIVE_LOCK = 0x7a_c41e;

/**
 * Appends a consumed event to the archive, in the consumer's transaction (so it is archived exactly when it is
 * applied): the next position, the previous hash, the new hash — computed by PostgreSQL in the one INSERT, the same
 * way `chainHash` does (SHA-256 over "prev\\nposition\\ntext", hex). An event already archived (a redelivery) is skipped.
 * The chain lock is taken once per transaction; the position's primary key would refuse a race even without it.
 */
@Injectable()
export class ArchiveEventUseCase {
  private readonly locked = new WeakSet<EntityManager>();

  async append(manager: EntityManager, topic: string, envelope: EventEnvelope): Promise<void> {
    await this.lock(manager);
    await manager.query(
      `WITH last AS (SELECT position, hash FROM ledger.event_archive ORDER BY position DESC LIMIT 1),
            head AS (SELECT COALESCE((SELECT position FROM last), 0) + 1 AS position, COALESCE((SELECT hash FROM last), $7) AS prev)
       INSERT INTO ledger.event_archive (position, event_id, topic, type, key, occurred_at, event_text, prev_hash, hash)
       SELECT head.position, $1, $2, $3, $4, $5, $6, head.prev,
              encode(sha256(convert_to(head.prev || E'\\n' || head.position::text || E'\\n' || $6, 'UTF8')), 'hex')
         FROM head WHERE NOT EXISTS (SELECT 1 FROM ledger.event_archive WHERE event_id = $1)`,
      [envelope.eventId, topic, envelope.type, envelope.key, envelope.occurredAt, canonicalJson(envelope), GENESIS]);
  }

  /**
   * Appends a batch of consumed events in two statements: the chain's head and which of them are archived already
   * (a redelivery), then one INSERT of the rest with positions and hashes chained here (`chainHash`, the same rule).
   */
  async appendAll(manager: EntityManager, items: readonly { topic: string; envelope: EventEnvelope }[]): Promise<void> {
    if (items.length === 0) return;
    await this.lock(manager);
    const [head] = (await manager.query(
      `SELECT (SELECT position FROM ledger.event_archive ORDER BY position DESC LIMIT 1)::int AS position,
              (SELECT hash FROM ledger.event_archive ORDER BY position DESC LIMIT 1) AS hash,
              (SELECT coalesce(array_agg(event_id::text), '{}') FROM ledger.event_archive WHERE event_id = ANY($1::uuid[])) AS archived`,
      [items.map((i) => i.envelope.eventId)])) as { position: number | null; hash: string | null; archived: string[] }[];
    const archived = new Set(head!.archived);
    let at = { position: head!.position ?? 0, hash: head!.hash ?? GENESIS };
    const fresh = items.filter((i) => !archived.has(i.envelope.eventId) && Boolean(archived.add(i.envelope.eventId)));
    const rows = fresh.map((i) => {
      const text = canonicalJson(i.envelope);
      const position = at.position + 1;
      const row = { ...i, text, position, prev: at.hash, hash: chainHash(at.hash, position, text) };
      at = { position, hash: row.hash };
      return row;
    });
    if (rows.length === 0) return;
    await manager.query(
      `INSERT INTO ledger.event_archive (position, event_id, topic, type, key, occurred_at, event_text, prev_hash, hash)
       SELECT * FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::text[], $8::text[], $9::text[])`,
      [rows.map((r) => r.position), rows.map((r) => r.envelope.eventId), rows.map((r) => r.topic), rows.map((r) => r.envelope.type), rows.map((r) => r.envelope.key),
        rows.map((r) => r.envelope.occurredAt), rows.map((r) => r.text), rows.map((r) => r.prev), rows.map((r) => r.hash)]);
  }

  private async lock(manager: EntityManager): Promise<void> {
    if (this.locked.has(manager)) return;
    await manager.query('SELECT pg_advisory_xact_lock($1)', [ARCHIVE_LOCK]);
    this.locked.add(manager);
  }
}
