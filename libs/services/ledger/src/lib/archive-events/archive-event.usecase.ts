import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { canonicalJson, type EventEnvelope } from '@tollgate/contracts';
import { GENESIS } from './hash-chain';

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
    if (!this.locked.has(manager)) {
      await manager.query('SELECT pg_advisory_xact_lock($1)', [ARCHIVE_LOCK]);
      this.locked.add(manager);
    }
    await manager.query(
      `WITH last AS (SELECT position, hash FROM ledger.event_archive ORDER BY position DESC LIMIT 1),
            head AS (SELECT COALESCE((SELECT position FROM last), 0) + 1 AS position, COALESCE((SELECT hash FROM last), $7) AS prev)
       INSERT INTO ledger.event_archive (position, event_id, topic, type, key, occurred_at, event_text, prev_hash, hash)
       SELECT head.position, $1, $2, $3, $4, $5, $6, head.prev,
              encode(sha256(convert_to(head.prev || E'\\n' || head.position::text || E'\\n' || $6, 'UTF8')), 'hex')
         FROM head WHERE NOT EXISTS (SELECT 1 FROM ledger.event_archive WHERE event_id = $1)`,
      [envelope.eventId, topic, envelope.type, envelope.key, envelope.occurredAt, canonicalJson(envelope), GENESIS]);
  }
}
