import { randomUUID } from 'node:crypto';
import { waitFor } from '@tollgate/testing';
import { type DeliveredMessage, eachMessage, type EventTransport } from '../src';

/**
 * The delivery contract every EventTransport driver must keep (see
 * libs/messaging event-transport.ts). Run against the PostgreSQL log (the
 * embedded mode's) and against the real Kafka broker in integration tests, so
 * the embedded mode cannot drift from the distributed one.
 */
export function describeTransportContract(
  driver: string,
  make: () => Promise<EventTransport>,
  topics: () => Promise<string[]>,
): void {
  describe(`EventTransport contract: ${driver}`, () => {
    let transport: EventTransport;
    let topic: string;
    let other: string;

    beforeAll(async () => {
      [topic, other] = (await topics()) as [string, string];
      transport = await make();
      await transport.connect();
    });
    afterAll(async () => transport.close());

    it('delivers messages of one key in publish order, and a new group from the beginning replays them', async () => {
      const key = randomUUID();
      const values = Array.from({ length: 20 }, (_, i) => `v${i}`);
      for (const v of values) await transport.publish([{ topic, key, value: v }]);
      const seen: string[] = [];
      const sub = await transport.subscribe({
        groupId: `contract-${randomUUID()}`,
        topics: [topic],
        fromBeginning: true,
        handleBatch: eachMessage(async (m) => {
          if (m.key === key) seen.push(m.value);
        }),
      });
      await waitFor('all 20 messages', () => seen.length >= 20);
      await sub.stop();
      expect(seen).toEqual(values);
    });

    it('redelivers a message whose handler failed, before anything behind it on the partition', async () => {
      const key = randomUUID();
      let failures = 0;
      const seen: string[] = [];
      const sub = await transport.subscribe({
        groupId: `contract-${randomUUID()}`,
        topics: [other],
        fromBeginning: true,
        handleBatch: eachMessage(async (m: DeliveredMessage) => {
          if (m.key !== key) return;
          if (m.value === 'first' && failures < 2) {
            failures++;
            throw new Error('simulated handler failure');
          }
          seen.push(m.value);
        }),
      });
      await transport.publish([
        { topic: other, key, value: 'first' },
        { topic: other, key, value: 'second' },
      ]);
      await waitFor('both messages', () => seen.length >= 2);
      await sub.stop();
      expect(failures).toBe(2);
      expect(seen).toEqual(['first', 'second']);
    });
  });
}
