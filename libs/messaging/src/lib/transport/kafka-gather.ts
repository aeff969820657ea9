import { type DeliveredMessage } from './event-transport';

/** Partitions a member handles at once, so that one fetch's batches arrive together (see PartitionGather). */
export const GATHERED_PARTITIONS = 64;

interface Waiting { chunk: DeliveredMessage[]; heartbeat: () => Promise<void>; settle: (handled: boolean) => void; fail: (error: unknown) => void }

/**
 * A subscription's chunks of several partitions, handed to its handler together. kafkajs calls `eachBatch` once per
 * partition, and every call event has a topic of its own, so a consumer committed once per partition of each fetch
 * (the ledger: 1.3 transactions per paid call). Chunks that arrive together — the batches of one fetch, handled side by
 * side by kafkajs — go in one `handle` call, one transaction: within `windowMs` for a lingering subscription, within the
 * same turn of the event loop for one on the critical path (no wait). Calls run one at a time, so two never lock rows
 * side by side. Each chunk's order within its partition is kept (a partition's next chunk only comes once this one is
 * settled). Resolves with whether the chunk was handled (false: stopped first).
 */
export class PartitionGather {
  private waiting: Waiting[] = [];
  private timer?: NodeJS.Timeout;
  private running: Promise<void> = Promise.resolve();

  constructor(
    private readonly handle: (messages: DeliveredMessage[], heartbeat: () => Promise<void>) => Promise<boolean>,
    private readonly windowMs: number,
  ) {}

  add(chunk: DeliveredMessage[], heartbeat: () => Promise<void>): Promise<boolean> {
    return new Promise((settle, fail) => {
      this.waiting.push({ chunk, heartbeat, settle, fail });
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        this.running = this.running.then(() => this.flush());
      }, this.windowMs);
    });
  }

  private async flush(): Promise<void> {
    const gathered = this.waiting.splice(0);
    if (gathered.length === 0) return;
    try {
      const handled = await this.handle(gathered.flatMap((w) => w.chunk), gathered[0]!.heartbeat);
      for (const w of gathered) w.settle(handled);
    } catch (error) {
      for (const w of gathered) w.fail(error);
    }
  }
}
