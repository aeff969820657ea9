/**
 * Distributed mode, real Kafka and PostgreSQL: a call event is published by the process that wrote it right after its
 * transaction commits — no relay wake-up, no read of the outbox — and its row is marked published. Nothing is
 * published for a transaction that rolls back. When the publish fails, the row goes back to the relay at once; when
 * the writer dies before publishing, its lease runs out and the relay publishes it. Nothing is lost either way (B3).
 */
import { randomUUID } from 'node:crypto';
import { type DataSource } from 'typeorm';
import { defineEvent, EffectConfirmedPayload, type TopicName } from '@tollgate/contracts';
import { createLogger } from '@tollgate/observability';
import { createTestDatabase, ensureTopics, TEST_KAFKA_BROKERS, uniqueName, waitFor } from '@tollgate/testing';
import { type EventTransport, KafkaTransport, OUTBOX_LEASE_MS, OutboxRelay, OutboxWriter, type TransportMessage } from '../src';
import { openProbeDataSource } from './probe.fixture';

const logger = createLogger('publish-after-commit-test', process.env['TEST_LOG_LEVEL'] ?? 'silent');
jest.setTimeout(120_000);

describe('call events are published right after their commit (distributed mode)', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;
  let transport: KafkaTransport;
  const stops: (() => Promise<void>)[] = [];
  const schema = uniqueName('direct');
  const topic = `test.${schema.replace(/_/g, '-')}.effect-confirmed.v1` as TopicName;
  // A call event (the model's EffectConfirmed) on a topic of its own.
  const confirmed = defineEvent({ type: 'EffectConfirmed', version: 1, topic, payload: EffectConfirmedPayload, keyOf: (p) => p.intentId });
  const received = new Map<string, number>();
  /** How the writer's publish behaves: through to the broker, failing, or never returning (its process died). */
  let publishMode: 'through' | 'fail' | 'hang' = 'through';

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_direct');
    ds = await openProbeDataSource(db.url, schema);
    await ensureTopics([topic]);
    transport = new KafkaTransport({ clientId: 'direct-test', brokers: TEST_KAFKA_BROKERS, logger });
    await transport.connect();
    const sub = await transport.subscribe({
      groupId: `direct-${schema}`, topics: [topic], fromBeginning: true,
      handleBatch: async (messages) => {
        for (const m of messages) {
          const intentId = (JSON.parse(m.value) as { payload: { intentId: string } }).payload.intentId;
          received.set(intentId, (received.get(intentId) ?? 0) + 1);
        }
      },
    });
    stops.push(() => sub.stop());
  });
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop().catch(() => undefined);
    await transport.close();
    await ds.destroy();
    await db.drop();
  });

  /** The writer's transport: the real one, whose publish the test can make fail or hang. */
  const writerTransport = (): EventTransport => Object.assign(Object.create(transport) as KafkaTransport, {
    publish: (messages: readonly TransportMessage[]) => {
      if (publishMode === 'fail') return Promise.reject(new Error('the broker is unreachable'));
      if (publishMode === 'hang') return new Promise<void>(() => undefined);
      return transport.publish(messages);
    },
  });
  const writer = () => new OutboxWriter(schema, 'test', writerTransport());
  const append = (w: OutboxWriter, intentId: string) => ds.transaction((m) => w.append(m, confirmed, { intentId, attempt: 1, method: 'output_contract', providerId: 'p-1' }));
  const row = async (intentId: string) =>
    (await ds.query(`SELECT published_at IS NOT NULL AS published, leased_until IS NOT NULL AS leased FROM "${schema}".outbox_event WHERE envelope->'payload'->>'intentId' = $1`, [intentId]))[0];

  it('with no relay running at all, the event reaches the broker after commit and its row is marked published', async () => {
    publishMode = 'through';
    const intentId = randomUUID();
    await append(writer(), intentId);
    await waitFor('the event at the broker', async () => received.get(intentId) === 1, 20_000, 50);
    await waitFor('the row marked', async () => (await row(intentId)).published === true, 5_000, 50);
    expect(await row(intentId)).toEqual({ published: true, leased: true });
  });

  it('rows published by several commits are marked together, in fewer statements than commits', async () => {
    publishMode = 'through';
    const marks: string[] = [];
    const query = ds.query.bind(ds);
    ds.query = ((sql: string, params?: unknown[]) => {
      if (sql.includes('SET published_at')) marks.push(sql);
      return query(sql, params);
    }) as typeof ds.query;
    try {
      const w = writer();
      const ids = Array.from({ length: 6 }, () => randomUUID());
      for (const id of ids) await append(w, id);
      await waitFor('all six at the broker', async () => ids.every((id) => received.get(id) === 1), 20_000, 50);
      await waitFor('all six marked', async () => (await Promise.all(ids.map(row))).every((r) => r.published === true), 5_000, 50);
      expect(marks.length).toBeGreaterThan(0);
      expect(marks.length).toBeLessThan(ids.length);
    } finally {
      ds.query = query;
    }
  });

  it('a transaction that rolls back publishes nothing', async () => {
    publishMode = 'through';
    const intentId = randomUUID();
    const w = writer();
    await expect(ds.transaction(async (m) => {
      await w.append(m, confirmed, { intentId, attempt: 1, method: 'output_contract', providerId: 'p-1' });
      throw new Error('the state change failed');
    })).rejects.toThrow('the state change failed');
    await new Promise((r) => setTimeout(r, 1_500));
    expect({ received: received.get(intentId), row: await row(intentId) }).toEqual({ received: undefined, row: undefined });
  });

  it('a failed publish gives the row back to the relay at once (its NOTIFY, not its poll)', async () => {
    const relay = new OutboxRelay({ schema, dataSource: ds, databaseUrl: db.url, transport, logger, pollIntervalMs: 60_000 });
    await relay.start();
    stops.push(() => relay.stop());
    publishMode = 'fail';
    const intentId = randomUUID();
    await append(writer(), intentId);
    await waitFor('the relay publishing it', async () => received.get(intentId) === 1, 20_000, 50);
    await waitFor('the row marked', async () => (await row(intentId)).published === true, 5_000, 50);
    expect(await row(intentId)).toEqual({ published: true, leased: false });
  });

  it('a writer that died before publishing: the relay leaves the row alone while it is leased, then publishes it', async () => {
    const relay = new OutboxRelay({ schema, dataSource: ds, databaseUrl: db.url, transport, logger, pollIntervalMs: 300 });
    await relay.start();
    stops.push(() => relay.stop());
    publishMode = 'hang';
    const intentId = randomUUID();
    await append(writer(), intentId);
    // Several polls inside the lease: the row is still the writer's.
    await new Promise((r) => setTimeout(r, OUTBOX_LEASE_MS / 2));
    expect({ received: received.get(intentId), row: await row(intentId) }).toEqual({ received: undefined, row: { published: false, leased: true } });
    await waitFor('the relay publishing it once the lease ran out', async () => received.get(intentId) === 1, OUTBOX_LEASE_MS + 20_000, 100);
    // The relay marks the row after the broker took the event, so the consumer can see it a moment before the mark.
    await waitFor('the row marked', async () => (await row(intentId)).published === true, 5_000, 50);
    expect(received.get(intentId)).toBe(1);
  });
});
