import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { canonicalJson, type EventEnvelope } from '@tollgate/contracts';
import { type EventArchiveRow, EventArchive } from './event-archive.repository';
import { chainHash, GENESIS } from './hash-chain';

export { ARCHIVE_LOCK } from './event-archive.repository';

/**
 * Appends consumed events to the archive, in the consumer's transaction (so each is archived exactly when it is
 * applied), a batch in two statements under the chain lock: the head and which events are archived already (a
 * redelivery, skipped), then one INSERT with positions and hashes chained here (`chainHash`: SHA-256 over
 * "prev\nposition\ntext", hex). The position's primary key would refuse a race even without the lock.
 */
@Injectable()
export class ArchiveEventUseCase {

  append(manager: EntityManager, topic: string, envelope: EventEnvelope): Promise<void> {
    return this.appendAll(manager, [{ topic, envelope }]);
  }

  async appendAll(manager: EntityManager, items: readonly { topic: string; envelope: EventEnvelope }[]): Promise<void> {
    if (items.length === 0) return;
    await EventArchive.lock(manager);
    const head = await EventArchive.head(manager, items.map((i) => i.envelope.eventId));
    const archived = new Set(head.archived);
    const fresh = items.filter((i) => !archived.has(i.envelope.eventId) && Boolean(archived.add(i.envelope.eventId)));
    let at = { position: head.position ?? 0, hash: head.hash ?? GENESIS };
    const rows = fresh.map(({ topic, envelope }): EventArchiveRow => {
      const text = canonicalJson(envelope);
      const position = at.position + 1;
      const hash = chainHash(at.hash, position, text);
      const row = { position, event_id: envelope.eventId, topic, type: envelope.type, key: envelope.key, occurred_at: envelope.occurredAt, event_text: text, prev_hash: at.hash, hash };
      at = { position, hash };
      return row;
    });
    await EventArchive.insert(manager, rows);
  }
}
