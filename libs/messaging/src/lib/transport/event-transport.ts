import { type EntityManager } from 'typeorm';
/**
 * The seam between services and the message broker. Two drivers implement it
 * (Kafka, and a log in PostgreSQL for the embedded mode) with the same
 * delivery contract, so no service knows which one it runs on:
 *
 *  - `publish` resolves only once every message is durably accepted
 *    (Kafka: acknowledged by all in-sync replicas; PostgreSQL: committed).
 *  - Delivery is at least once. Within one topic, messages with the same key
 *    are delivered in the order they were published.
 *  - A subscription's handler gets batches: consecutive messages of one
 *    partition, in order (a lingering subscription's batch may hold several
 *    partitions' and topics', each partition's in order). The position
 *    advances past a batch only after the handler resolves. A handler that throws gets the same batch again (with
 *    back-off), and nothing behind it on that partition is delivered first.
 *  - A new consumer group starts from the oldest retained message when
 *    `fromBeginning` is true, else from the end.
 *
 * Exactly-once effects are NOT part of the contract: consumers deduplicate
 * through their inbox, and producers write through their outbox.
 */
export interface TransportMessage {
  topic: string;
  key: string;
  value: string;
  headers?: Record<string, string>;
}

export interface DeliveredMessage extends TransportMessage {
  partition: number;
  offset: string;
}

/** Topics whose messages alone may wait for more (see `SubscribeOptions.deferrable`). */
export interface Deferrable {
  topics: readonly string[];
  upToMs: number;
}

/**
 * How an inline application is guarded: `together` — the transport holds one savepoint around every consumer's inline
 * work, and a failure is thrown to it (it then offers everything again, `each`); `each` — the consumer takes a
 * savepoint of its own, and a failure rolls back only its work and returns false.
 */
export type InlineMode = 'together' | 'each';

export interface SubscribeOptions {
  groupId: string;
  topics: readonly string[];
  fromBeginning: boolean;
  /**
   * For consumers off the critical path (projections, bookkeeping): once caught up, wait this long (ms) after the
   * first new message so that more arrive and are handled in one batch — fewer transactions for a little latency.
   * Kafka then also hands the partitions of one fetch to the handler together (every call event has a topic of its own).
   */
  lingerMs?: number;
  /**
   * For consumers on the critical path whose batches are cheaper together: messages of these topics alone may wait up
   * to `upToMs` for more of the same calls to come, and any other message ends the wait at once (handled with what
   * has gathered) — e.g. a request waits for its hold, which is what the consumer acts on. The embedded log's
   * in-process hand-off defers; Kafka fetches what is there (its batches come from the broker).
   */
  deferrable?: Deferrable;
  /**
   * Most messages per `handleBatch` call (default: the transport's batch size). 1 for consumers whose handlers lock
   * shared rows (wallets, the clearing account): one event per transaction keeps lock order trivial, so partitions
   * handled side by side never deadlock.
   */
  maxBatchSize?: number;
  /** Consecutive messages of one partition, in order (never empty); with `lingerMs`, maybe of several, each in order. */
  handleBatch(messages: readonly DeliveredMessage[]): Promise<void>;
  /**
   * Embedded mode's shared transaction: messages a transaction of this process appended, applied inside that very
   * transaction right before it commits. True when applied — the transport then does not hand them on again; false
   * leaves them to the normal delivery. A transport whose log is elsewhere (Kafka) never calls it. Only messages of
   * `inlineTopics` are offered. `mode` says who guards the producer's facts against a failure (see InlineMode).
   */
  applyInline?(messages: readonly DeliveredMessage[], manager: EntityManager, mode: InlineMode): Promise<boolean>;
  /** The topics `applyInline` takes (the rest of a transaction's messages are handed on after commit as usual). */
  inlineTopics?: readonly string[];
}

/** Adapts a one-message handler to `handleBatch` (tools and tests that do not need batches). */
export function eachMessage(handle: (message: DeliveredMessage) => Promise<void>): (messages: readonly DeliveredMessage[]) => Promise<void> {
  return async (messages) => {
    for (const m of messages) await handle(m);
  };
}

/** What a transport that lives in the services' own database needs to write inside their transaction. */
export interface SqlExecutor {
  query(sql: string, parameters?: unknown[]): Promise<unknown>;
}

export interface Subscription {
  /** Finishes the message in flight, then stops; positions already handled are kept. */
  stop(): Promise<void>;
}

export interface EventTransport {
  /** Messages behind the end of each partition for these consumer groups (for metrics); optional. */
  consumerLag?(groupIds: readonly string[]): Promise<{ groupId: string; lag: number }[]>;
  readonly driver: 'kafka' | 'postgres';
  connect(): Promise<void>;
  publish(messages: readonly TransportMessage[]): Promise<void>;
  /**
   * Only a transport whose log lives in the writer's own database offers this: the messages join the writer's
   * transaction, so they are in the log exactly when (and if) the state change commits — no outbox row, no relay.
   */
  appendInTransaction?(executor: SqlExecutor, messages: readonly TransportMessage[]): Promise<void>;
  subscribe(options: SubscribeOptions): Promise<Subscription>;
  /** True while connected and every subscription is running. */
  isReady(): boolean;
  close(): Promise<void>;
}

export const EVENT_TRANSPORT = Symbol('EVENT_TRANSPORT');

/** Runs `attempt` until it resolves or `isStopped()`; waits 100 ms, doubling to 5 s, between tries. */
export async function retryUntilStopped(
  attempt: () => Promise<void>,
  isStopped: () => boolean,
  onError: (error: unknown, tries: number) => void,
  /** Run after each failed try (a consumer's heartbeat, so a long outage does not cost it its group); what it throws ends the retries. */
  between?: () => Promise<void>,
): Promise<boolean> {
  let delay = 100;
  for (let tries = 1; ; tries++) {
    try {
      await attempt();
      return true;
    } catch (error) {
      onError(error, tries);
      if (isStopped()) return false;
      await between?.();
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, 5000);
      if (isStopped()) return false;
    }
  }
}
