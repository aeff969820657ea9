/**
 * The event backbone against the real PostgreSQL and the real Kafka broker
 * B3/B4: outbox ordering under overlapping transactions, a relay
 * killed with SIGKILL, redelivery from offset 0, and a poison message.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { type DataSource } from 'typeorm';
import { DeadLetterParked, decodeEnvelope } from '@tollgate/contracts';
import { createLogger } from '@tollgate/observability';
import {
  createTestDatabase, ensureTopics, groupCaughtUp, startTsProcess, TEST_KAFKA_BROKERS, uniqueName, waitFor,
} from '@tollgate/testing';
import { eachMessage, InboxConsumer, KafkaTransport, OutboxRelay, OutboxWriter } from '../src';
import { appliedCounts, openProbeDataSource, probeEvent, probeHandler } from './probe.fixture';

const logger = createLogger('backbone-test', process.env['TEST_LOG_LEVEL'] ?? 'silent');
jest.setTimeout(120_000);

describe('event backbone on Kafka + PostgreSQL', () => {
  let db: { url: string; drop(): Promise<void> };
  let transport: KafkaTransport;
  const open: Array<{ stop(): Promise<void> }> = [];
  const sources: DataSource[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    await ensureTopics([DeadLetterParked.topic], 1);
    transport = new KafkaTransport({ clientId: 'backbone-test', brokers: TEST_KAFKA_BROKERS, logger });
    await transport.connect();
  });

  afterAll(async () => {
    for (const o of open.reverse()) await o.stop().catch(() => undefined);
    await transport.close();
    for (const ds of sources) await ds.destroy().catch(() => undefined);
    await db.drop();
  });

  async function setup(consumerName = 'probe') {
    const schema = uniqueName('probe');
    const topic = `test.${schema.replace(/_/g, '-')}.recorded.v1`;
    await ensureTopics([topic]);
    const ds = await openProbeDataSource(db.url, schema);
    sources.push(ds);
    const event = probeEvent(topic);
    // Names (and so Kafka groups) are unique per test: two tests never share a group.
    const consumer = new InboxConsumer({
      name: `${consumerName}-${schema}`, producer: 'test', schema, dataSource: ds, transport, logger, handlers: [probeHandler(event, schema)],
      outbox: new OutboxWriter(schema, 'test'),
    });
    return { schema, topic, ds, event, consumer };
  }

  it('delivers 1,000 events written by 8 concurrent transactions of different lengths: none skipped, none applied twice', async () => {
    const { schema, ds, event, consumer } = await setup();
    const relay = new OutboxRelay({ schema, dataSource: ds, databaseUrl: db.url, transport, logger, pollIntervalMs: 5_000 });
    await relay.start();
    open.push(relay);
    await consumer.start();
    open.push(consumer);

    const writer = new OutboxWriter(schema, 'test');
    // Transaction t writes its share in slices with pauses between them, so long
    // transactions hold low ids open while short ones commit higher ids first:
    // exactly the case a plain `id > last_seen` poller gets wrong.
    const shares = [25, 50, 75, 100, 125, 150, 200, 275];
    expect(shares.reduce((a, b) => a + b, 0)).toBe(1000);
    let next = 0;
    const commitOrder: number[] = [];
    await Promise.all(
      shares.map((share, t) =>
        ds.transaction(async (m) => {
          const slices = 8 - t;
          for (let s = 0; s < slices; s++) {
            const n = Math.ceil(share / slices);
            for (let i = 0; i < n && (s * Math.ceil(share / slices) + i) < share; i++) {
              await writer.append(m, event, { intentId: randomUUID(), seq: next++ });
            }
            await new Promise((r) => setTimeout(r, 40 * (8 - t)));
          }
        }).then(() => commitOrder.push(t)),
      ),
    );
    // The shortest transactions (highest t) committed first, while the longest were still open.
    expect(commitOrder[0]).toBeGreaterThan(commitOrder[commitOrder.length - 1]!);

    await waitFor('1,000 applied events', async () => (await appliedCounts(ds, schema)).rows === 1000, 60_000);
    const counts = await appliedCounts(ds, schema);
    expect(counts.seqs).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    expect(counts.maxTimes).toBe(1);
    const [{ unpublished }] = await ds.query(`SELECT count(*)::int AS unpublished FROM "${schema}".outbox_event WHERE published_at IS NULL`);
    expect(unpublished).toBe(0);
  });

  it.each(['before', 'after'])(
    'loses nothing and applies each event once when the relaying process is killed -9 %s the broker publish',
    async (mode) => {
      const { schema, topic, ds, consumer } = await setup();
      const count = 50;
      const child = startTsProcess(`relay-${mode}`, path.join('libs/messaging/test/relay-crash.fixture.ts'), [mode, db.url, schema, topic, String(count)]);
      open.push({ stop: async () => void (await child.stop('SIGKILL')) });
      await child.waitForOutput(/COMMITTED/);
      await child.waitForOutput(new RegExp(`PARKED_${mode.toUpperCase()}_PUBLISH`));
      await child.stop('SIGKILL');

      const [{ unpublished }] = await ds.query(`SELECT count(*)::int AS unpublished FROM "${schema}".outbox_event WHERE published_at IS NULL`);
      expect(unpublished).toBe(count); // committed, never marked published

      // A new relay (the "restarted" process) and the consumer.
      const relay = new OutboxRelay({ schema, dataSource: ds, databaseUrl: db.url, transport, logger, pollIntervalMs: 5_000 });
      await relay.start();
      open.push(relay);
      await consumer.start();
      open.push(consumer);
      await waitFor(`${count} applied events`, async () => (await appliedCounts(ds, schema)).rows === count, 60_000);
      // After the kill "after publish", the batch reached Kafka twice; the inbox absorbed the copy.
      await waitFor('consumer caught up', () => groupCaughtUp(consumer.groupId, topic), 30_000);
      const counts = await appliedCounts(ds, schema);
      expect(counts.rows).toBe(count);
      expect(counts.maxTimes).toBe(1);
      const ends = await (async () => {
        const admin = transport.admin();
        await admin.connect();
        try {
          return (await admin.fetchTopicOffsets(topic)).reduce((a, p) => a + Number(p.high), 0);
        } finally {
          await admin.disconnect();
        }
      })();
      expect(ends).toBe(mode === 'after' ? 2 * count : count);
    },
  );

  it('consuming the topic again from offset 0 leaves the consumer state unchanged (redelivery)', async () => {
    const { schema, topic, ds, event, consumer } = await setup('redelivery');
    const relay = new OutboxRelay({ schema, dataSource: ds, databaseUrl: db.url, transport, logger, pollIntervalMs: 5_000 });
    await relay.start();
    open.push(relay);
    const writer = new OutboxWriter(schema, 'test');
    await ds.transaction(async (m) => {
      for (let seq = 0; seq < 100; seq++) await writer.append(m, event, { intentId: randomUUID(), seq });
    });
    await consumer.start();
    await waitFor('100 applied', async () => (await appliedCounts(ds, schema)).rows === 100, 30_000);
    await consumer.stop();
    const before = await appliedCounts(ds, schema);
    const [{ inbox: inboxBefore }] = await ds.query(`SELECT count(*)::int AS inbox FROM "${schema}".inbox_event`);

    // Same consumer (same inbox name), a brand-new group: Kafka hands it every message from offset 0.
    const again = new InboxConsumer({
      name: consumer.groupId.replace(/^tollgate\./, ''), groupId: `replay-${randomUUID()}`, producer: 'test', schema, dataSource: ds, transport, logger,
      handlers: [probeHandler(event, schema)],
    });
    await again.start();
    open.push(again);
    await waitFor('replay consumed to the end', () => groupCaughtUp(again.groupId, topic), 30_000);
    expect(await appliedCounts(ds, schema)).toEqual(before);
    const [{ inbox: inboxAfter }] = await ds.query(`SELECT count(*)::int AS inbox FROM "${schema}".inbox_event`);
    expect(inboxAfter).toBe(inboxBefore);
  });

  it('parks an invalid payload on the dead-letter topic with its reason and applies the valid events behind it', async () => {
    const { schema, topic, ds, event, consumer } = await setup('poison');
    const key = randomUUID();
    const valid = (seq: number) => JSON.stringify({
      eventId: randomUUID(), type: event.type, version: 1, key, occurredAt: new Date().toISOString(), producer: 'test',
      payload: { intentId: key, seq },
    });
    const missingSeq = JSON.stringify({ ...JSON.parse(valid(0)), payload: { intentId: key } });
    // Same key, so all four sit on one partition in this order.
    await transport.publish([
      { topic, key, value: valid(1) },
      { topic, key, value: missingSeq },
      { topic, key, value: '{not json' },
      { topic, key, value: valid(2) },
    ]);

    const parked: { reasons: string[]; value: string }[] = [];
    const dlq = await transport.subscribe({
      groupId: `dlq-${randomUUID()}`, topics: [DeadLetterParked.topic], fromBeginning: true,
      handleBatch: eachMessage(async (m) => {
        const { payload } = decodeEnvelope(DeadLetterParked, m.value);
        if (payload.sourceTopic === topic) parked.push(payload);
      }),
    });
    open.push(dlq);
    // The dead-letter event is written through the consumer's outbox, in the transaction that parks the message.
    const relay = new OutboxRelay({ schema, dataSource: ds, databaseUrl: db.url, transport, logger, pollIntervalMs: 200 });
    await relay.start();
    open.push(relay);
    await consumer.start();
    open.push(consumer);

    await waitFor('valid events applied', async () => (await appliedCounts(ds, schema)).rows === 2, 30_000);
    expect((await appliedCounts(ds, schema)).seqs).toEqual([1, 2]);
    await waitFor('two parked messages', () => parked.length === 2, 30_000);
    expect(parked[0]!.reasons.join()).toMatch(/seq/);
    expect(parked[0]!.value).toBe(missingSeq);
    expect(parked[1]!.reasons.join()).toMatch(/not JSON/);
  });
});
