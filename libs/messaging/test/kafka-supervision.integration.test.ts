/**
 * The Kafka driver keeps a subscription alive through what a database outage does to a consumer (a failure
 * the distributed drill once had in CI): a batch whose handler keeps failing for longer than the group's session timeout
 * (10 s) must not cost the member its place in the group — it heartbeats between tries — so the batch is handled once
 * the handler recovers, the events behind it follow, and readiness never says "down" for a consumer that is fine.
 */
import { randomUUID } from 'node:crypto';
import { createLogger } from '@tollgate/observability';
import { ensureTopics, TEST_KAFKA_BROKERS, uniqueName, waitFor } from '@tollgate/testing';
import { eachMessage, KafkaTransport } from '../src';

jest.setTimeout(120_000);
const logger = createLogger('kafka-supervision-test', 'silent');

describe('Kafka subscriptions survive a long handler outage', () => {
  let transport: KafkaTransport;
  let topic: string;

  beforeAll(async () => {
    topic = `test.${uniqueName('supervision').replace(/_/g, '-')}.v1`;
    await ensureTopics([topic], 1);
    transport = new KafkaTransport({ clientId: 'supervision-test', brokers: TEST_KAFKA_BROKERS, logger });
    await transport.connect();
  });
  afterAll(async () => transport.close());

  it('a handler failing for 14 s (past the 10 s session timeout): the batch is handled after, the next event follows, ready throughout', async () => {
    const key = randomUUID();
    const outageUntil = Date.now() + 14_000;
    const seen: string[] = [];
    const readiness: boolean[] = [];
    const sub = await transport.subscribe({
      groupId: `supervision-${randomUUID()}`,
      topics: [topic],
      fromBeginning: true,
      handleBatch: eachMessage(async (m) => {
        if (m.key !== key) return;
        if (Date.now() < outageUntil) throw new Error('simulated database outage');
        seen.push(m.value);
      }),
    });
    try {
      await transport.publish([{ topic, key, value: 'during the outage' }]);
      const watch = setInterval(() => readiness.push(transport.isReady()), 500);
      await waitFor('the batch handled after the outage', () => seen.length >= 1, 60_000, 200);
      await transport.publish([{ topic, key, value: 'after the outage' }]);
      await waitFor('the next event', () => seen.length >= 2, 30_000, 100);
      clearInterval(watch);
      expect(seen).toEqual(['during the outage', 'after the outage']);
      expect(readiness.length).toBeGreaterThan(20);
      expect(readiness.every(Boolean)).toBe(true);
    } finally {
      await sub.stop();
    }
  });
});
