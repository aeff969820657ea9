import { type Consumer, type ConsumerConfig, type EachBatchPayload, Kafka, logLevel, Partitioners, type Producer, type LogEntry } from 'kafkajs';
import { type Logger } from 'pino';
import { GATHERED_PARTITIONS, PartitionGather } from './kafka-gather';
import { OffsetCommitter } from './kafka-offsets';
import { type DeliveredMessage, type EventTransport, retryUntilStopped, type SubscribeOptions, type Subscription, type TransportMessage } from './event-transport';

export interface KafkaTransportOptions {
  clientId: string;
  brokers: string[];
  logger: Logger;
  /**
   * Prepended to every topic name on the wire, so several environments (CI runs, developers)
   * can share one cluster. Services still see the contract's topic names.
   */
  topicPrefix?: string;
  /** How long `subscribe` waits for the group join before failing. */
  joinTimeoutMs?: number;
  /** Most messages handed to one `handleBatch` call (default 100). */
  batchSize?: number;
}

/** The longest a fetch waits at the broker for a first message (a stop waits for the fetch in flight). */
const IDLE_FETCH_WAIT_MS = 1_000;

/** How long a lingering member's gather waits for the other partitions of a fetch (ms; on the critical path: none). */
const LINGER_GATHER_MS = 5;

/** How often a member commits the offsets it handled (see OffsetCommitter). */
const OFFSET_COMMIT_INTERVAL_MS = 500;

/** One subscription's group member: the kafkajs consumer running it now (a new one after a crash kafkajs gives up on). */
interface ConsumerMember {
  consumer?: Consumer;
  offsets?: OffsetCommitter;
  healthy: boolean;
  stopped: boolean;
  /** Its partitions' chunks handled together (see PartitionGather). */
  gather?: PartitionGather;
}

/** The distributed driver (kafkajs). Delivery contract: see event-transport.ts. */
export class KafkaTransport implements EventTransport {
  readonly driver = 'kafka' as const;
  private readonly kafka: Kafka;
  private readonly producer: Producer;
  private readonly members = new Set<ConsumerMember>();
  private producerConnected = false;

  private readonly prefix: string;

  constructor(private readonly options: KafkaTransportOptions) {
    this.prefix = options.topicPrefix ?? '';
    const log = options.logger.child({ component: 'kafkajs' });
    this.kafka = new Kafka({
      clientId: options.clientId,
      brokers: options.brokers,
      logLevel: logLevel.WARN,
      logCreator: () => (entry: LogEntry) => {
        const { message, ...rest } = entry.log;
        const fn = entry.level <= logLevel.ERROR ? log.error.bind(log) : log.warn.bind(log);
        fn({ namespace: entry.namespace, ...rest }, message);
      },
      retry: { initialRetryTime: 100, retries: 8 },
    });
    // Not idempotent/transactional on purpose: money and effects never depend on
    // Kafka exactly-once; duplicates are absorbed by each consumer's inbox.
    this.producer = this.kafka.producer({ allowAutoTopicCreation: false, createPartitioner: Partitioners.DefaultPartitioner });
    this.producer.on(this.producer.events.DISCONNECT, () => (this.producerConnected = false));
  }

  /** Lag per group from the broker: end offsets minus the group's committed offsets, summed over its partitions. */
  async consumerLag(groupIds: readonly string[]): Promise<{ groupId: string; lag: number }[]> {
    // Readiness and scrapes may ask often: one broker round per group every few seconds at most.
    const key = groupIds.join(',');
    const cached = this.lagCache.get(key);
    if (cached && Date.now() - cached.at < 5000) return cached.lag;
    const lag = await this.fetchLag(groupIds);
    this.lagCache.set(key, { at: Date.now(), lag });
    return lag;
  }

  private readonly lagCache = new Map<string, { at: number; lag: { groupId: string; lag: number }[] }>();

  private async fetchLag(groupIds: readonly string[]): Promise<{ groupId: string; lag: number }[]> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const ends = new Map<string, Map<number, number>>();
      const out: { groupId: string; lag: number }[] = [];
      for (const groupId of groupIds) {
        let lag = 0;
        for (const { topic, partitions } of await admin.fetchOffsets({ groupId })) {
          if (!ends.has(topic)) ends.set(topic, new Map((await admin.fetchTopicOffsets(topic)).map((p) => [p.partition, Number(p.high)])));
          for (const p of partitions) lag += Math.max(0, (ends.get(topic)!.get(p.partition) ?? 0) - Math.max(0, Number(p.offset)));
        }
        out.push({ groupId, lag });
      }
      return out;
    } finally {
      await admin.disconnect();
    }
  }

  async connect(): Promise<void> {
    await this.producer.connect();
    this.producerConnected = true;
  }

  async publish(messages: readonly TransportMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const byTopic = new Map<string, TransportMessage[]>();
    for (const m of messages) {
      const wire = this.prefix + m.topic;
      byTopic.set(wire, [...(byTopic.get(wire) ?? []), m]);
    }
    await this.producer.sendBatch({
      acks: -1,
      topicMessages: [...byTopic].map(([topic, ms]) => ({
        topic,
        messages: ms.map((m) => ({ key: m.key, value: m.value, headers: m.headers ?? {} })),
      })),
    });
  }

  /**
   * One consumer group member per subscription, supervised: kafkajs restarts a consumer itself after a retriable
   * crash, but not after a non-retriable one (an ILLEGAL_GENERATION commit after the member was evicted while a batch
   * waited out a database outage, say) — the member would stay dead and the service never ready again. Then a new
   * member is started here, after a back-off, until one joins; readiness says "down" meanwhile.
   */
  async subscribe(options: SubscribeOptions): Promise<Subscription> {
    const member: ConsumerMember = { healthy: true, stopped: false };
    this.members.add(member);
    const restart = this.restarter(member, options);
    try {
      await this.startMember(member, options, restart);
    } catch (err) {
      member.stopped = true;
      this.members.delete(member);
      throw err;
    }
    return {
      stop: async () => {
        member.stopped = true;
        await member.offsets?.commit();
        await member.consumer?.stop();
        await member.consumer?.disconnect();
        member.offsets?.close();
        this.members.delete(member);
      },
    };
  }

  /** One restart at a time: a new member after the back-off, again (doubling to 30 s) until one joins. */
  private restarter(member: ConsumerMember, options: SubscribeOptions): () => void {
    let restartDelayMs = 1_000;
    let restarting = false;
    const restart = () => {
      if (member.stopped || restarting) return;
      restarting = true;
      setTimeout(() => {
        if (member.stopped) return;
        this.startMember(member, options, restart).then(
          () => {
            restartDelayMs = 1_000;
            restarting = false;
          },
          (err) => {
            this.options.logger.error({ err, groupId: options.groupId }, 'consumer could not be restarted; trying again');
            restartDelayMs = Math.min(restartDelayMs * 2, 30_000);
            restarting = false;
            restart();
          },
        );
      }, restartDelayMs).unref();
    };
    return restart;
  }

  /** Connects a new kafkajs consumer for `member`, runs it, and resolves once it joined its group. */
  private async startMember(member: ConsumerMember, options: SubscribeOptions, restart: () => void): Promise<void> {
    const consumer = this.kafka.consumer(consumerConfig(this.prefix + options.groupId, options.lingerMs));
    member.consumer = consumer;
    member.gather = new PartitionGather((messages, heartbeat) => this.handleChunk(member, options, messages, heartbeat), options.lingerMs ? LINGER_GATHER_MS : 0);
    member.offsets?.close();
    const offsets = new OffsetCommitter(consumer, OFFSET_COMMIT_INTERVAL_MS, this.options.logger);
    member.offsets = offsets;
    consumer.on(consumer.events.GROUP_JOIN, (e) => offsets.keepOnly(e.payload.memberAssignment));
    const joinTimeoutMs = this.options.joinTimeoutMs ?? 30_000;
    const joined = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`group ${options.groupId} did not join within ${joinTimeoutMs} ms`)), joinTimeoutMs);
      consumer.on(consumer.events.GROUP_JOIN, () => {
        clearTimeout(timer);
        member.healthy = true;
        resolve();
      });
    });
    // Handled here too: when connecting fails first, nobody awaits the join, and its timeout must not go unhandled.
    joined.catch(() => undefined);
    consumer.on(consumer.events.CRASH, (e) => {
      member.healthy = false;
      const restarts = e.payload.restart;
      this.options.logger.error({ err: e.payload.error, groupId: options.groupId, restarts }, restarts ? 'consumer crashed; kafkajs restarts it' : 'consumer crashed; starting a new one');
      if (!restarts && member.consumer === consumer) restart();
    });
    try {
      await this.run(consumer, member, options);
      await joined;
    } catch (err) {
      await consumer.disconnect().catch(() => undefined);
      throw err;
    }
  }

  private async run(consumer: Consumer, member: ConsumerMember, options: SubscribeOptions): Promise<void> {
    await consumer.connect();
    await consumer.subscribe({ topics: options.topics.map((t) => this.prefix + t), fromBeginning: options.fromBeginning });
    await consumer.run({
      // Offsets are committed by the member's OffsetCommitter every OFFSET_COMMIT_INTERVAL_MS, not after each batch.
      autoCommit: false,
      // Partitions are taken side by side only to be gathered into one handler call (PartitionGather): still one batch
      // at a time per consumer — a batch's transaction updates the rows of several calls, and two batches of the same
      // group side by side (one call's events travel on several topics) could lock them in opposite orders.
      partitionsConsumedConcurrently: GATHERED_PARTITIONS,
      eachBatchAutoResolve: false,
      eachBatch: (payload) => this.eachBatch(member, options, payload),
    });
  }

  private async eachBatch(member: ConsumerMember, options: SubscribeOptions, { batch, resolveOffset, heartbeat, isRunning, isStale }: EachBatchPayload): Promise<void> {
    const topic = batch.topic.slice(this.prefix.length);
    const batchSize = Math.min(this.options.batchSize ?? 100, options.maxBatchSize ?? Infinity);
    for (let i = 0; i < batch.messages.length; i += batchSize) {
      if (!isRunning() || isStale()) return;
      const chunk: DeliveredMessage[] = batch.messages.slice(i, i + batchSize).map((message) => ({
        topic,
        partition: batch.partition,
        offset: message.offset,
        key: message.key?.toString() ?? '',
        value: message.value?.toString() ?? '',
        headers: Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, v?.toString() ?? ''])),
      }));
      const done = await member.gather!.add(chunk, heartbeat);
      // Throwing leaves the offset uncommitted, so the batch is redelivered after the stop.
      if (!done) throw new Error('subscription stopped before the batch was handled');
      resolveOffset(chunk.at(-1)!.offset);
      member.offsets?.handled(batch.topic, batch.partition, chunk.at(-1)!.offset);
      if (member.stopped || member.offsets?.due()) await member.offsets?.commit();
      await heartbeat();
    }
  }

  /**
   * The handler over one chunk until it succeeds. While it keeps failing (a database outage), the member keeps
   * heartbeating: it stays in its group instead of being evicted after the session timeout. A heartbeat that fails (a
   * rebalance) ends the batch; it is redelivered.
   */
  private handleChunk(member: ConsumerMember, options: SubscribeOptions, chunk: DeliveredMessage[], heartbeat: () => Promise<void>): Promise<boolean> {
    return retryUntilStopped(() => options.handleBatch(chunk), () => member.stopped, (error, tries) => this.options.logger.warn(
      { err: error, topic: chunk[0]!.topic, partition: chunk[0]!.partition, offset: chunk[0]!.offset, tries }, 'batch handler failed; will redeliver'), heartbeat);
  }

  isReady(): boolean {
    return this.producerConnected && [...this.members].every((m) => m.healthy);
  }

  async close(): Promise<void> {
    for (const m of this.members) m.stopped = true;
    await Promise.all([...this.members].map((m) => m.offsets?.commit()));
    for (const m of this.members) m.offsets?.close();
    await Promise.all([...this.members].map((m) => m.consumer?.disconnect().catch(() => undefined)));
    this.members.clear();
    await this.producer.disconnect();
    this.producerConnected = false;
  }

  /** Admin access for ops tooling (topic creation, offsets). */
  admin(): ReturnType<Kafka['admin']> {
    return this.kafka.admin();
  }
}

/** A member's kafkajs settings: group liveness, fetch sizes for the largest event, and the fetch wait. */
function consumerConfig(groupId: string, lingerMs: number | undefined): ConsumerConfig {
  return {
    groupId,
    sessionTimeout: 10_000,
    heartbeatInterval: 1_000,
    rebalanceTimeout: 10_000,
    allowAutoTopicCreation: false,
    retry: { initialRetryTime: 100, retries: 10 },
    // A ResultReceived may carry a provider result up to 2,500,000 bytes (R6): fetch sizes leave room for it.
    maxBytesPerPartition: 8 * 1024 * 1024,
    maxBytes: 16 * 1024 * 1024,
    // A lingering consumer lets the broker gather a batch: up to lingerMs, or until 64 KiB are waiting. Any other
    // consumer's fetch returns as soon as one message is there; its long poll is kept to 1 s (kafkajs' default, 5 s)
    // because a stop waits for the fetch in flight: 5 s per consumer on every shutdown and restart.
    ...(lingerMs ? { maxWaitTimeInMs: lingerMs, minBytes: 64 * 1024 } : { maxWaitTimeInMs: IDLE_FETCH_WAIT_MS }),
  };
}
