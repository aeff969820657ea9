import { type Consumer } from 'kafkajs';
import { type Logger } from 'pino';

interface PartitionOffset { topic: string; partition: number; offset: string }

/**
 * The offsets one group member has handled, committed to its group every `intervalMs` (and at a stop) instead of after
 * every batch, as kafkajs does by default: an offset commit is a broker round trip before the member's next fetch, and a
 * write to the broker's offsets log — one per event on a quiet system, on every service.
 *
 * Why it loses nothing: an offset is committed only after its batch was handled and committed in PostgreSQL, so a
 * commit never runs ahead of the work. A crash or a rebalance before a commit redelivers at most `intervalMs` of events,
 * which every consumer's inbox (or its model) absorbs — the same redelivery a crash mid-batch has always caused.
 */
export class OffsetCommitter {
  private readonly pending = new Map<string, PartitionOffset>();
  private lastCommitAt = Date.now();
  private committing?: Promise<void>;
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly consumer: Consumer, private readonly intervalMs: number, private readonly logger: Logger) {
    this.timer = setInterval(() => void this.commit(), intervalMs);
    this.timer.unref();
  }

  /** Marks `offset` of a wire topic's partition handled: the group's position becomes the next one. */
  handled(topic: string, partition: number, offset: string): void {
    this.pending.set(`${topic}\u0000${partition}`, { topic, partition, offset: (BigInt(offset) + 1n).toString() });
  }

  /** Whether the interval has passed since the last commit with something to commit. */
  due(): boolean {
    return this.pending.size > 0 && Date.now() - this.lastCommitAt >= this.intervalMs;
  }

  /** After a rebalance: forgets partitions this member no longer owns (their new owner starts from the group's position). */
  keepOnly(assignment: Record<string, number[]>): void {
    for (const [key, p] of this.pending) if (!assignment[p.topic]?.includes(p.partition)) this.pending.delete(key);
  }

  /** Commits what is pending (one commit at a time); a failed commit is tried again with the next one. */
  async commit(): Promise<void> {
    if (this.committing) return this.committing;
    if (this.pending.size === 0) return;
    const offsets = [...this.pending.values()];
    this.pending.clear();
    this.lastCommitAt = Date.now();
    this.committing = this.consumer.commitOffsets(offsets).catch((err: unknown) => {
      this.logger.debug({ err }, 'offset commit failed; retried with the next one (the inbox absorbs any redelivery)');
      for (const p of offsets) {
        const key = `${p.topic}\u0000${p.partition}`;
        if (!this.pending.has(key)) this.pending.set(key, p);
      }
    }).finally(() => (this.committing = undefined));
    return this.committing;
  }

  close(): void {
    clearInterval(this.timer);
  }
}
