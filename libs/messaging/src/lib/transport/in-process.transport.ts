import { type Logger } from 'pino';
import { type DeliveredMessage, type EventTransport, retryUntilStopped, type SubscribeOptions, type Subscription, type TransportMessage } from './event-transport';

interface Waiter {
  wake(): void;
}

/**
 * The embedded-mode driver: an append-only log per topic kept in memory, one
 * partition per topic, and a position per consumer group. Same contract as
 * the Kafka driver (see event-transport.ts), including redelivery on failure
 * and replay from the beginning for a new group.
 */
export class InProcessTransport implements EventTransport {
  readonly driver = 'in-process' as const;
  private readonly logs = new Map<string, TransportMessage[]>();
  private readonly positions = new Map<string, number>();
  private readonly waiters = new Set<Waiter>();
  private readonly activeGroups = new Set<string>();
  private connected = false;

  constructor(private readonly logger?: Logger) {}

  async connect(): Promise<void> {
    this.connected = true;
  }

  async publish(messages: readonly TransportMessage[]): Promise<void> {
    if (!this.connected) throw new Error('in-process transport is not connected');
    for (const m of messages) this.logOf(m.topic).push({ ...m });
    for (const w of [...this.waiters]) w.wake();
  }

  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    if (!this.connected) throw new Error('in-process transport is not connected');
    if (this.activeGroups.has(options.groupId)) throw new Error(`group ${options.groupId} already has a subscriber`);
    this.activeGroups.add(options.groupId);
    let stopped = false;
    const loops = options.topics.map((topic) => this.runTopic(topic, options, () => stopped));
    return {
      stop: async () => {
        stopped = true;
        for (const w of [...this.waiters]) w.wake();
        await Promise.all(loops);
        this.activeGroups.delete(options.groupId);
      },
    };
  }

  isReady(): boolean {
    return this.connected;
  }

  async close(): Promise<void> {
    this.connected = false;
    for (const w of [...this.waiters]) w.wake();
  }

  private logOf(topic: string): TransportMessage[] {
    let log = this.logs.get(topic);
    if (!log) this.logs.set(topic, (log = []));
    return log;
  }

  private async runTopic(topic: string, options: SubscribeOptions, isStopped: () => boolean): Promise<void> {
    const positionKey = `${options.groupId}\u0000${topic}`;
    const log = this.logOf(topic);
    if (!this.positions.has(positionKey)) this.positions.set(positionKey, options.fromBeginning ? 0 : log.length);
    while (!isStopped()) {
      const offset = this.positions.get(positionKey)!;
      if (offset >= log.length) {
        await this.waitForMore();
        continue;
      }
      const delivered: DeliveredMessage = { ...log[offset]!, partition: 0, offset: String(offset) };
      const done = await retryUntilStopped(
        () => options.handle(delivered),
        isStopped,
        (error, tries) => this.logger?.warn({ err: error, topic, offset, tries }, 'handler failed; will redeliver'),
      );
      if (!done) return;
      this.positions.set(positionKey, offset + 1);
    }
  }

  private waitForMore(): Promise<void> {
    return new Promise((resolve) => {
      const waiter: Waiter = {
        wake: () => {
          this.waiters.delete(waiter);
          resolve();
        },
      };
      this.waiters.add(waiter);
    });
  }
}
