/**
 * Embedded mode's shared transaction (real PostgreSQL log): the consumers on the critical path apply what a
 * transaction appended right before it commits, each once per round with everything appended for it so far. A
 * consumer that reacts to the request (as payment does) appends its reply inside the producer's transaction, and a
 * consumer of both (as execution is) gets the request and the reply in one batch — one savepoint, one fold. A consumer
 * whose savepoint rolls back leaves nothing behind: its reply is never offered, and the request takes the normal
 * delivery with its retries. Everything a transaction appended is written to the log in one statement at its commit,
 * and the consumers' inline work shares one savepoint unless one of them fails (R-budgets: statements per call).
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
  /** Seqs whose reply must fail when first offered: the shared savepoint, then the replier's own, roll back. */
  const failOffered = new Map<number, number>();
  /** Seqs whose first application by the consumer of both must fail (after the replier's reply was appended). */
  const bothFailsOnce = new Set<number>();
  /** The replier's after-commit steps that ran, by seq. */
  const repliedAfterCommit: number[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_inline');
    ds = await openProbeDataSource(db.url, schema);
    transport = new PostgresLogTransport({ databaseUrl: db.url, logger, pollIntervalMs: 200 });
    await transport.connect();
    const writer = new OutboxWriter(schema, 'test', transport);
    const replier = new InboxConsumer({
      name: 'replier', producer: 'test', schema, dataSource: ds, transport, logger, inline: [request.topic],
      handlers: [on(request, async ({ payload, manager, afterCommit }) => {
        const failures = failOffered.get(payload.seq) ?? 0;
        if (failures > 0) {
          failOffered.set(payload.seq, failures - 1);
          throw new Error('the replier fails');
        }
        await writer.append(manager, reply, { intentId: payload.intentId, seq: payload.seq });
        afterCommit(() => void repliedAfterCommit.push(payload.seq));
      })],
    });
    const both = new InboxConsumer({
      name: 'both', producer: 'test', schema, dataSource: ds, transport, logger, inline: [request.topic, reply.topic],
      ...perBatch([request, reply], async ({ events }) => {
        const seq = (events[0]!.payload as { seq: number }).seq;
        if (bothFailsOnce.delete(seq)) throw new Error('the consumer of both fails once');
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
  /** Produces like `produce`, recording every statement the producer's transaction ran (its commit's work included). */
  const produceRecorded = async (seq: number): Promise<string[]> => {
    const statements: string[] = [];
    await ds.transaction(async (m) => {
      const runner = m.queryRunner!;
      const query = runner.query.bind(runner);
      runner.query = ((sql: string, ...rest: unknown[]) => {
        statements.push(sql.trim().replace(/\s+/g, ' '));
        return (query as (...a: unknown[]) => Promise<unknown>)(sql, ...rest);
      }) as typeof runner.query;
      await new OutboxWriter(schema, 'test', transport).append(m, request, { intentId: randomUUID(), seq });
    });
    return statements;
  };
  const logged = async (topic: string, seq: number) => Number((await ds.query(
    `SELECT count(*)::int AS n FROM eventlog.event WHERE topic = $1 AND (value::jsonb -> 'payload' ->> 'seq')::int = $2`, [topic, seq]))[0].n);
  const inbox = async (consumer: string) => Number((await ds.query(`SELECT count(*)::int AS n FROM "${schema}".inbox_event WHERE consumer = $1`, [consumer]))[0].n);

  it('the request and the reply it caused reach the consumer of both in one batch, applied before the producer\'s commit returned', async () => {
    const statements = await produceRecorded(1);
    // No wait: both were applied inside the producer's transaction.
    expect(batches).toEqual([{ topics: [request.topic, reply.topic], seqs: [1, 1] }]);
    expect({ replier: await inbox('replier'), both: await inbox('both') }).toEqual({ replier: 1, both: 2 });
    // The request and the reply in one write to the log; both consumers under one savepoint.
    expect(statements.filter((s) => s.includes('INSERT INTO eventlog.event'))).toHaveLength(1);
    expect(statements.filter((s) => s.startsWith('SAVEPOINT') || s.startsWith('RELEASE'))).toEqual(['SAVEPOINT tollgate_inline']);
    expect({ request: await logged(request.topic, 1), reply: await logged(reply.topic, 1) }).toEqual({ request: 1, reply: 1 });
  });

  it('a consumer failing after another appended its reply: the shared savepoint rolls back, each is offered again alone, the reply is logged once', async () => {
    batches.length = 0;
    bothFailsOnce.add(3);
    await produce(3);
    // The replier applied inline (on the second offer); the consumer of both failed there too and got the normal delivery.
    expect(await inbox('replier')).toBe(2);
    await waitFor('the consumer of both after the retry', async () => batches.some((b) => b.seqs.includes(3)), 20_000, 50);
    expect(batches.flatMap((b) => b.seqs)).toEqual([3, 3]);
    expect({ request: await logged(request.topic, 3), reply: await logged(reply.topic, 3) }).toEqual({ request: 1, reply: 1 });
    // What the replier scheduled under the shared savepoint was dropped with it: its after-commit step ran once.
    expect(repliedAfterCommit.filter((seq) => seq === 3)).toEqual([3]);
  });

  it('what a rolled-back savepoint of the producer appended is never logged nor offered; a released one\'s is', async () => {
    batches.length = 0;
    await ds.transaction(async (m) => {
      const writer = new OutboxWriter(schema, 'test', transport);
      await m.transaction((inner) => writer.append(inner, request, { intentId: randomUUID(), seq: 4 })); // released
      await m.transaction(async (inner) => {
        await writer.append(inner, request, { intentId: randomUUID(), seq: 5 });
        throw new Error('undone');
      }).catch(() => undefined);
    });
    expect({ kept: await logged(request.topic, 4), undone: await logged(request.topic, 5) }).toEqual({ kept: 1, undone: 0 });
    expect(batches.flatMap((b) => b.seqs)).toEqual([4, 4]);
  });

  it('a replier whose savepoint rolled back leaves no reply to offer; the normal delivery retries it and the reply arrives once', async () => {
    batches.length = 0;
    failOffered.set(2, 2); // offered with the others, then alone
    await produce(2);
    expect(batches).toEqual([{ topics: [request.topic], seqs: [2] }]);
    await waitFor('the reply after the retry', async () => batches.some((b) => b.topics.includes(reply.topic)), 20_000, 50);
    await new Promise((r) => setTimeout(r, 500));
    expect(batches.flatMap((b) => b.topics.filter((t) => t === reply.topic))).toHaveLength(1);
  });
});
