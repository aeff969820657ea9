import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { canonicalJson, type EventEnvelope } from '@tollgate/contracts';
import { chainHash, GENESIS } from './hash-chain';

/** One lock for the whole chain: archiving transactions take turns (positions and links must not race). */
const ARCHIVE_LOCK = 0x7a_c41e;

/**
 * Appends a consumed event to the archive, in the consumer's transaction (so it is archived exactly when it is
 * applied): the next position, the previous hash, the new hash. An event already archived (a redelivery) is skipped.
 */
@Injectable()
export class ArchiveEventUseCase {
  async append(manager: EntityManager, topic: string, envelope: EventEnvelope): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock($1)', [ARCHIVE_LOCK]);
    const [last]: { position: string; hash: string; seen: boolean }[] = await manager.query(
      `SELECT position::text, hash, EXISTS (SELECT 1 FROM ledger.event_archive WHERE event_id = $1) AS seen
         FROM (SELECT position, hash FROM ledger.event_archive ORDER BY position DESC LIMIT 1) l
       UNION ALL SELECT '0', $2, EXISTS (SELECT 1 FROM ledger.event_archive WHERE event_id = $1) LIMIT 1`,
      [envelope.eventId, GENESIS]);
    if (last!.seen) return;
    const position = BigInt(last!.position) + 1n;
    const text = canonicalJson(envelope);
    await manager.query(
      `INSERT INTO ledger.event_archive (position, event_id, topic, type, key, occurred_at, event_text, prev_hash, hash)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [position.toString(), envelope.eventId, topic, envelope.type, envelope.key, envelope.occurredAt, text, last!.hash, chainHash(last!.hash, position, text)]);
  }
}
