/**
 * Embedded mode's shared transaction (real PostgreSQL log): the consumers on the critical path apply what a
 * transaction appended right before it commits, each once per round with everything appended for it so far. A
 * consumer that reacts to the request (as payment does) appends its reply inside the producer's transaction, and a
 * consumer of both (as execution is) gets the request and the reply in one batch — one savepoint, one fold. A consumer
 * whose savepoint rolls back leaves nothing behind: its reply is never offered, and the request takes the normal
 * delivery with its retries.
 */
import { randomUUID } from 'node:crypto';
import { type DataSource } from 'typeorm';
import { createLogger } from '@tollgate/observability';
import { createTestDatabase, uniqueName, waitFor } from '@tollgate/testing';
import { InboxConsumer, on, OutboxWriter, perBatch, PostgresLogTransport } from '../src';
import { openProbeDataSource, probeEvent } from './probe.fixture';

jest.setTimeout(120_000);
const logger = createLogger('inline-test', process.env['TEST_LOG_LEVEL'] ?? 'silent');

describe('consumers on the critical path apply a transaction\'s appends at its commit', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;
  let transport: PostgresLogTransport;
  const schema = uniqueName('inline');
  const request = probeEvent(`test.${schema.replace(/_/g, '-')}.request.v1`);
  const reply = probeEvent(`test.${schema.replace(/_/g, '-')}.reply.v1`);
  /** The batches the consumer of both saw, by event type and seq, and whether each was applied inside its producer's commit. */
  const batches: { topics: string[]; seqs: number[] }[] = [];
  /** Seqs whose first reply must fail (the replier's savepoint rolls back). */
  const failOnce = new Set<number>();

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_inline');
    ds = await openProbeDataSource(db.url, schema);
    transport = new PostgresLogTransport({ databaseUrl: db.url, logger, pollIntervalMs: 200 });
    await transport.connect();
    const writer = new OutboxWriter(schema, 'test', transport);
    const replier = new InboxConsumer({
      name: 'replier', producer: 'test', schema, dataSource: ds, transport, logger, inline: [request.topic],
      handlers: [on(request, async ({ payload, manager }) => {
        if (failOnce.delete(payload.seq)) throw new Error('the replier fails once');
        await writer.append(manager, reply, { intentId: payload.intentId, seq: payload.seq });
      })],
    });
    const both = new InboxConsumer({
      name: 'both', producer: 'test', schema, dataSource: ds, transport, logger, inline: [request.topic, reply.topic],
      ...perBatch([request, reply], async ({ events }) => {
        batches.push({ topics: events.map((e) => e.topic), seqs: events.map((e) => (e.payload as { seq: number }).seq) });
      }),
    });
    // The consumer of both subscribes first: it is still offered after the replier (fewer inline topics go first).
    await both.start();
    await replier.start();
    afterAllStop.push(() => replier.stop(), () => both.stop());
  });
  const afterAllStop: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const stop of afterAllStop) await stop();
    await transport.close();
    await ds.destroy();
    await db.drop();
  });

  const produce = (seq: number) => ds.transaction((m) => new OutboxWriter(schema, 'test', transport).append(m, request, { intentId: randomUUID(), seq }));
  const inbox = async (consumer: string) => Number((await ds.query(`SELECT count(*)::int AS n FROM "${schema}".inbox_event WHERE consumer = $1`, [consumer]))[0].n);

  it('the request and the reply it caused reach the consumer of both in one batch, applied before the producer\'s commit returned', async () => {
    await produce(1);
    // No wait: both were applied inside the producer's transaction.
    expect(batches).toEqual([{ topics: [request.topic, reply.topic], seqs: [1, 1] }]);
    expect({ replier: await inbox('replier'), both: await inbox('both') }).toEqual({ replier: 1, both: 2 });
  });

  it('a replier whose savepoint rolled back leaves no reply to offer; the normal delivery retries it and the reply arrives once', async () => {
    batches.length = 0;
    failOnce.add(2);
    await produce(2);
    expect(batches).toEqual([{ topics: [request.topic], seqs: [2] }]);
    await waitFor('the reply after the retry', async () => batches.some((b) => b.topics.includes(reply.topic)), 20_000, 50);
    await new Promise((r) => setTimeout(r, 500));
    expect(batches.flatMap((b) => b.topics.filter((t) => t === reply.topic))).toHaveLength(1);
  });
});
