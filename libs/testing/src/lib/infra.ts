import { randomBytes } from 'node:crypto';
import { Kafka, logLevel } from 'kafkajs';
import { dropDatabase, ensureDatabase } from '@tollgate/persistence';
import { waitFor } from './wait-for';

/** The PostgreSQL server tests use (CI: the machine's server). Each test suite gets its own database on it. */
export const TEST_POSTGRES_URL = process.env['TEST_POSTGRES_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const TEST_KAFKA_BROKERS = (process.env['KAFKA_BROKERS'] ?? '127.0.0.1:9092').split(',');

export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
}

/** A fresh, empty database for one suite; `drop` removes it. */
export async function createTestDatabase(prefix = 'tollgate_t'): Promise<{ url: string; drop(): Promise<void> }> {
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${uniqueName(prefix)}`;
  await ensureDatabase(url.toString());
  return { url: url.toString(), drop: () => dropDatabase(url.toString()) };
}

export function testKafka(clientId = 'tollgate-test'): Kafka {
  return new Kafka({ clientId, brokers: TEST_KAFKA_BROKERS, logLevel: logLevel.NOTHING });
}

/**
 * Creates topics if missing (tests use unique topic names so runs never see each other's messages) and waits until every
 * partition has a leader. Retried as a whole: while other suites create their topics on the same single broker, its
 * metadata can lag behind a creation ("This server does not host this topic-partition"), which kafkajs's own wait for
 * leaders gives up on.
 */
export async function ensureTopics(names: readonly string[], partitions = 3): Promise<void> {
  const admin = testKafka().admin();
  await admin.connect();
  try {
    await waitFor(`${names.length} topics, each partition with a leader`, async () => {
      const existing = new Set(await admin.listTopics());
      const missing = names.filter((n) => !existing.has(n));
      if (missing.length > 0) await admin.createTopics({ waitForLeaders: false, topics: missing.map((topic) => ({ topic, numPartitions: partitions, replicationFactor: 1 })) });
      const { topics } = await admin.fetchTopicMetadata({ topics: [...names] });
      return topics.length === names.length && topics.every((t) => t.partitions.length > 0 && t.partitions.every((p) => p.leader >= 0));
    }, 90_000, 500);
  } finally {
    await admin.disconnect();
  }
}

/** True once `groupId` has committed offsets at the end of every partition of `topic`. */
export async function groupCaughtUp(groupId: string, topic: string): Promise<boolean> {
  const admin = testKafka().admin();
  await admin.connect();
  try {
    const ends = await admin.fetchTopicOffsets(topic);
    const [committed] = await admin.fetchOffsets({ groupId, topics: [topic] });
    return ends.every((e) => {
      const c = committed?.partitions.find((p) => p.partition === e.partition);
      const end = Number(e.high);
      return end === 0 || (c !== undefined && Number(c.offset) === end);
    });
  } finally {
    await admin.disconnect();
  }
}
