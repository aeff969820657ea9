import { randomUUID } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { col, defineTable, select } from '@tollgate/persistence';
import { type DeliveredMessage, type SqlExecutor } from './event-transport';

/**
 * Reading topics from a point to where they end now — what ops replay does with the broker. Not a
 * subscription: nothing is committed for any group, and the read stops at the end offsets seen when it started.
 */
export interface HistoryStart {
  /** Per partition (Kafka) or log position (embedded): the first offset to read. Default: the oldest retained. */
  offset?: number;
  /** The first message at or after this time. */
  time?: Date;
}

export interface TopicHistory {
  /** How many messages the read will yield (for progress). */
  total: number;
  batches: AsyncIterable<DeliveredMessage[]>;
}

const toMessage = (topic: string, partition: number, m: { key: Buffer | null; value: Buffer | null; offset: string; headers?: Record<string, unknown> }): DeliveredMessage => ({
  topic, partition, offset: m.offset, key: m.key?.toString() ?? '', value: m.value?.toString() ?? '',
  headers: Object.fromEntries(Object.entries(m.headers ?? {}).map(([k, v]) => [k, String(v ?? '')])),
});

/** Start and end offsets per partition of each topic. */
async function offsetRanges(kafka: Kafka, topics: readonly string[], from: HistoryStart) {
  const admin = kafka.admin();
  await admin.connect();
  try {
    const ranges: { topic: string; partition: number; start: number; end: number }[] = [];
    for (const topic of topics) {
      const ends = await admin.fetchTopicOffsets(topic);
      const byTime = from.time ? await admin.fetchTopicOffsetsByTimestamp(topic, from.time.getTime()) : [];
      for (const p of ends) {
        const low = Number(p.low);
        const atTime = byTime.find((t) => t.partition === p.partition);
        const start = Math.max(low, from.offset ?? 0, atTime ? Number(atTime.offset) : low);
        ranges.push({ topic, partition: p.partition, start, end: Number(p.high) });
      }
    }
    return ranges;
  } finally {
    await admin.disconnect();
  }
}

/**
 * Reads Kafka topics from a point to their current end, partition batches in order, with no group offsets committed.
 * `topicPrefix` is the deployment's (KAFKA_TOPIC_PREFIX): read from the prefixed topics, delivered under their names.
 */
export async function readKafkaHistory(brokers: readonly string[], topics: readonly string[], from: HistoryStart = {}, topicPrefix = ''): Promise<TopicHistory> {
  const kafka = new Kafka({ clientId: 'tollgate-ops-replay', brokers: [...brokers], logLevel: logLevel.NOTHING });
  const ranges = (await offsetRanges(kafka, topics.map((t) => `${topicPrefix}${t}`), from)).filter((r) => r.end > r.start);
  const total = ranges.reduce((n, r) => n + r.end - r.start, 0);
  return { total, batches: unprefixed(kafkaBatches(kafka, ranges), topicPrefix) };
}

async function* unprefixed(batches: AsyncIterable<DeliveredMessage[]>, prefix: string): AsyncGenerator<DeliveredMessage[]> {
  for await (const batch of batches) yield prefix ? batch.map((m) => ({ ...m, topic: m.topic.slice(prefix.length) })) : batch;
}

async function* kafkaBatches(kafka: Kafka, ranges: { topic: string; partition: number; start: number; end: number }[]): AsyncGenerator<DeliveredMessage[]> {
  if (ranges.length === 0) return;
  const queue: { batch: DeliveredMessage[]; taken: () => void }[] = [];
  let wake: () => void = () => undefined;
  const remaining = new Map(ranges.map((r) => [`${r.topic}/${r.partition}`, r]));
  const groupId = `tollgate-ops-replay-${randomUUID()}`;
  const consumer = kafka.consumer({ groupId, maxBytes: 16 * 1024 * 1024 });
  await consumer.connect();
  await consumer.subscribe({ topics: [...new Set(ranges.map((r) => r.topic))], fromBeginning: true });
  await consumer.run({
    autoCommit: false,
    eachBatch: async ({ batch }) => {
      const range = remaining.get(`${batch.topic}/${batch.partition}`);
      if (!range) return;
      const messages = inRange(batch.messages, range).map((m) => toMessage(batch.topic, batch.partition, m));
      if (Number(batch.lastOffset()) + 1 >= range.end) {
        remaining.delete(`${batch.topic}/${batch.partition}`);
        consumer.pause([{ topic: batch.topic, partitions: [batch.partition] }]);
      }
      if (messages.length === 0) return;
      await new Promise<void>((taken) => {
        queue.push({ batch: messages, taken });
        wake();
      });
    },
  });
  for (const r of ranges) consumer.seek({ topic: r.topic, partition: r.partition, offset: String(r.start) });
  try {
    while (remaining.size > 0 || queue.length > 0) {
      if (queue.length === 0) await new Promise<void>((w) => (wake = w));
      const next = queue.shift();
      if (!next) continue;
      yield next.batch;
      next.taken();
    }
  } finally {
    await consumer.disconnect();
    await dropGroup(kafka, groupId);
  }
}

/** The messages of a batch within a partition's range (start inclusive, end exclusive). */
function inRange<M extends { offset: string }>(messages: M[], range: { start: number; end: number }): M[] {
  return messages.filter((m) => Number(m.offset) >= range.start && Number(m.offset) < range.end);
}

/** A replay's throwaway group leaves no trace on the broker (best effort). */
async function dropGroup(kafka: Kafka, groupId: string): Promise<void> {
  const admin = kafka.admin();
  await admin.connect().then(() => admin.deleteGroups([groupId])).catch(() => undefined).finally(() => admin.disconnect());
}

/** The embedded log's events as a replay reads them (the position as text: a bigint), and a stretch of it. */
const LOG_EVENT = defineTable('(eventlog.event, read)', {
  offset: col.text().required(), topic: col.text().required(), key: col.text().required(), value: col.text().required(), headers: col.jsonb<Record<string, string>>().nullable(),
});
const LOG_RANGE = defineTable('(eventlog range)', { first: col.text().required(), last: col.text().required(), n: col.integer().required() });

/** The embedded mode's log (schema `eventlog`), read in position order from a position or a time to its current end. */
export async function readEventLogHistory(db: SqlExecutor, topics: readonly string[], from: HistoryStart = {}): Promise<TopicHistory> {
  const [range] = await select(db, LOG_RANGE, ['first', 'last', 'n'],
    `SELECT COALESCE(min(id), 0)::text AS first, COALESCE(max(id), 0)::text AS last, count(*)::int AS n FROM eventlog.event
      WHERE topic = ANY($1::text[]) AND id >= $2 AND ($3::timestamptz IS NULL OR created_at >= $3)`,
    [topics, from.offset ?? 0, from.time ?? null]);
  return { total: range!.n, batches: logBatches(db, topics, Number(range!.first), Number(range!.last), from.time) };
}

async function* logBatches(db: SqlExecutor, topics: readonly string[], first: number, last: number, time?: Date): AsyncGenerator<DeliveredMessage[]> {
  let after = first - 1;
  while (after < last) {
    const rows = await select(db, LOG_EVENT, ['offset', 'topic', 'key', 'value', 'headers'],
      `SELECT id::text AS offset, topic, key, value, headers FROM eventlog.event
        WHERE id > $1 AND id <= $2 AND topic = ANY($3::text[]) AND ($4::timestamptz IS NULL OR created_at >= $4) ORDER BY id LIMIT 5000`,
      [after, last, topics, time ?? null]);
    if (rows.length === 0) return;
    after = Number(rows.at(-1)!.offset);
    yield rows.map((r) => ({ topic: r.topic, partition: 0, offset: r.offset, key: r.key, value: r.value, headers: r.headers ?? {} }));
  }
}
