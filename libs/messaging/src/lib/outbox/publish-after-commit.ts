import { type DataSource, type QueryRunner } from 'typeorm';
import { type EventTransport, type TransportMessage } from '../transport/event-transport';
import { afterCommit } from '../transport/commit-hand-off';
import { OUTBOX_CHANNEL } from './messaging-tables';

/** How long a row published right after its commit is left to its writer before the relay takes it (a writer that died). */
export const OUTBOX_LEASE_MS = 5_000;

/**
 * How long published rows wait to be marked, so that the marks of many commits go in one UPDATE (far inside the lease:
 * a row not marked in time is published once more by the relay, which the consumers absorb).
 */
const MARK_DELAY_MS = 100;

/** A leased outbox row, waiting for its transaction's commit. */
interface Leased { id: string; message: TransportMessage }

/**
 * Publishes outbox rows right after their transaction commits, from the process that wrote them: no relay wake-up,
 * no read of the outbox, one UPDATE to mark them. Rows stay leased to the writer (`leased_until`) until then; if the
 * publish fails, the lease is dropped and the relay told at once, and if the process dies, the lease runs out and the
 * relay publishes them — so nothing is lost, and a duplicate is absorbed by the consumers' inboxes (at-least-once).
 * Rows are published in batches: each `afterCommit` queues its row; one flush at a time takes whatever is queued — the
 * rows of one commit when idle, the commits that arrived meanwhile under load (as the relay batches). Published rows are
 * marked `MARK_DELAY_MS` later, every row published meanwhile in one statement.
 */
export class PublishAfterCommit {
  private queue: Leased[] = [];
  private flushing?: Promise<void>;
  /** Rows published and not marked yet. */
  private published: string[] = [];
  private marking?: NodeJS.Timeout;
  private dataSource?: DataSource;

  constructor(private readonly schema: string, private readonly transport: EventTransport) {}

  /** Publishes this row once `runner`'s transaction commits (nothing if it rolls back, or its savepoint does). */
  register(runner: QueryRunner, id: string, message: TransportMessage): void {
    afterCommit(runner, () => {
      this.queue.push({ id, message });
      this.dataSource = runner.connection;
      this.flushing ??= this.flushAll().finally(() => (this.flushing = undefined));
    });
  }

  /** Flushes until the queue is empty (rows queued while a publish was in flight go in the next batch). */
  private async flushAll(): Promise<void> {
    await new Promise((r) => setImmediate(r)); // the other rows of this commit join the batch
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      await this.flush(this.dataSource!, batch);
    }
  }

  private async flush(ds: DataSource, batch: readonly Leased[]): Promise<void> {
    const ids = batch.map((b) => b.id);
    try {
      await this.transport.publish(batch.map((b) => b.message));
    } catch {
      // The relay's: unleased, and woken now (if even this fails, the lease runs out and its poll finds them).
      await ds.query(`WITH freed AS (UPDATE "${this.schema}".outbox_event SET leased_until = NULL WHERE id = ANY($1::bigint[]) AND published_at IS NULL RETURNING 1)
                      SELECT pg_notify($2, $3)`, [ids, OUTBOX_CHANNEL, this.schema]).catch(() => undefined);
      return;
    }
    this.published.push(...ids);
    this.marking ??= setTimeout(() => void this.mark(ds), MARK_DELAY_MS).unref();
  }

  /** Marks every row published since the last mark, in one statement (one that fails is left to the lease: see MARK_DELAY_MS). */
  private async mark(ds: DataSource): Promise<void> {
    const ids = this.published;
    this.published = [];
    this.marking = undefined;
    await ds.query(`UPDATE "${this.schema}".outbox_event SET published_at = now() WHERE id = ANY($1::bigint[])`, [ids]).catch(() => undefined);
  }
}
