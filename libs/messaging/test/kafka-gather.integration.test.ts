/**
 * A subscription on the real Kafka broker gets one fetch's messages of several topics and partitions in one handler
 * call (one transaction, not one per partition), each partition's messages still in order — a lingering one within a
 * few ms, one on the critical path without waiting; a failing call is redelivered whole, before anything behind it
 * (R-budgets: transactions per call, distributed).
 */
import { createLogger } from '@tollgate/observability';
import { ensureTopics, TEST_KAFKA_BROKERS, uniqueName, waitFor } from '@tollgate/testing';
import { type DeliveredMessage, KafkaTransport, type Subscription } from '../src';

jest.setTimeout(120_000);
const logger = createLogger('kafka-gather-test', 'silent');

describe('a Kafka subscription gathers its partitions into one handler call', () => {
  let transport: KafkaTransport;
  let subscription: Subscription | undefined;
  const base = uniqueName('gather').replace(/_/g, '-');
  const topics = ['a', 'b', 'c'].map((t) => `test.${base}.${t}.v1`);
  /** The handler calls, each as the messages it got. */
  const calls: DeliveredMessage[][] = [];
  let failNext = 0;

  beforeAll(async () => {
    await ensureTopics(topics, 3);
    transport = new KafkaTransport({ clientId: 'gather-test', brokers: TEST_KAFKA_BROKERS, logger });
    await transport.connect();
    subscription = await transport.subscribe({
      groupId: `${base}-projection`, topics, fromBeginning: true, lingerMs: 300,
      handleBatch: async (messages) => {
        if (failNext > 0) {
          failNext--;
          throw new Error('the projection fails once');
        }
        calls.push([...messages]);
      },
    });
  });
  afterAll(async () => {
    await subscription?.stop();
    await transport.close();
  });

  const publishRound = (round: number) => transport.publish(topics.flatMap((topic) => Array.from({ length: 6 }, (_, i) => ({ topic, key: `key-${i}`, value: `${round}:${topic}:${i}` }))));
  /** The distinct values handled (a rebalance on a fresh broker may hand a message twice: at least once). */
  const seen = () => [...new Set(calls.flatMap((c) => c.map((m) => m.value)))];

  it('eighteen messages over three topics and their partitions arrive in fewer handler calls than partitions, each partition in order', async () => {
    await publishRound(1);
    await waitFor('all eighteen handled', async () => seen().filter((v) => v.startsWith('1:')).length === 18, 30_000, 50);
    const partitions = new Set(calls.flat().map((m) => `${m.topic}/${m.partition}`));
    expect(partitions.size).toBeGreaterThan(3);
    // Without gathering, each partition's batch is a call of its own.
    expect(calls.length).toBeLessThan(partitions.size);
    expect(calls.some((c) => new Set(c.map((m) => m.topic)).size > 1)).toBe(true);
    for (const p of partitions) {
      const offsets = calls.flat().filter((m) => `${m.topic}/${m.partition}` === p).map((m) => Number(m.offset));
      expect(offsets).toEqual([...offsets].sort((x, y) => x - y));
    }
  });

  it('a subscription on the critical path (no linger) gathers what one fetch brings, without waiting for more', async () => {
    const got: DeliveredMessage[][] = [];
    const critical = await transport.subscribe({
      groupId: `${base}-critical`, topics, fromBeginning: true,
      handleBatch: async (messages) => void got.push([...messages]),
    });
    try {
      await waitFor('round one again, from the beginning', async () => new Set(got.flat().filter((m) => m.value.startsWith('1:')).map((m) => m.value)).size === 18, 30_000, 50);
      const partitions = new Set(got.flat().map((m) => `${m.topic}/${m.partition}`));
      expect(got.length).toBeLessThan(partitions.size);
    } finally {
      await critical.stop();
    }
  });

  it('a failing call is redelivered whole: every message handled once it succeeds, none lost', async () => {
    failNext = 1;
    await publishRound(2);
    await waitFor('round two handled', async () => seen().filter((v) => v.startsWith('2:')).length === 18, 30_000, 50);
    expect(new Set(seen().filter((v) => v.startsWith('2:'))).size).toBe(18);
  });
});
