/**
 * On real PostgreSQL: no failure is retried forever. A statement timeout (once treated as transient)
 * is bounded and parked; a "transient" failure that lasts while the database answers is bounded too, with readiness
 * degraded meanwhile; the events behind either go on. Re-drive claims each parked event, so two replicas asked to
 * re-drive at once apply it once.
 */
import { randomUUID } from 'node:crypto';
import { createLogger } from '@tollgate/observability';
import { createTestDatabase, uniqueName, waitFor } from '@tollgate/testing';
import { InboxConsumer, on, OutboxWriter, PostgresLogTransport } from '../src';
import { appliedCounts, openProbeDataSource, probeEvent, probeHandler } from './probe.fixture';

jest.setTimeout(120_000);
const logger = createLogger('failure-bounds-test', process.env['TEST_LOG_LEVEL'] ?? 'silent');

let db: { url: string; drop(): Promise<void> };
let transport: PostgresLogTransport;
beforeAll(async () => {
  db = await createTestDatabase('tollgate_failbounds');
  transport = new PostgresLogTransport({ databaseUrl: db.url, logger, pollIntervalMs: 200 });
  await transport.connect();
});
afterAll(async () => {
  await transport.close();
  await db.drop();
});

async function probeSetup(prefix: string) {
  const schema = uniqueName(prefix);
  const ds = await openProbeDataSource(db.url, schema);
  const event = probeEvent(`test.${schema.replace(/_/g, '-')}.recorded.v1`);
  const writer = new OutboxWriter(schema, 'test', transport);
  const publish = (seqs: number[]) => ds.transaction(async (m) => {
    for (const seq of seqs) await writer.append(m, event, { intentId: randomUUID(), seq });
  });
  return { schema, ds, event, writer, publish, inner: probeHandler(event, schema) };
}

describe('bounded failures', () => {
  it('a statement timeout (57014) is retried a bounded number of times, then parked; the events behind it are applied', async () => {
    const p = await probeSetup('timeout');
    const consumer = new InboxConsumer({
      name: 'timeout', producer: 'test', schema: p.schema, dataSource: p.ds, transport, logger, maxAttempts: 3, outbox: p.writer,
      handlers: [on(p.event, async (ctx) => {
        if (ctx.payload.seq === 2) await ctx.manager.query(`SET LOCAL statement_timeout = '20ms'; SELECT pg_sleep(1)`);
        await p.inner.handle(ctx);
      })],
    });
    await consumer.start();
    await p.publish([1, 2, 3, 4]);
    await waitFor('the events around the slow one applied', async () => (await appliedCounts(p.ds, p.schema)).rows === 3, 30_000);
    await waitFor('the slow one parked', async () => (await consumer.parkedCount()) === 1, 30_000);
    const [parked] = await p.ds.query(`SELECT reason FROM "${p.schema}".parked_event`);
    expect(parked.reason).toMatch(/failed 3 times: .*statement timeout/);
    expect((await appliedCounts(p.ds, p.schema)).seqs).toEqual([1, 3, 4]);
    await consumer.stop();
    await p.ds.destroy();
  });

  it('a "transient" failure that lasts while the database answers is bounded: readiness degrades, then the event is parked and the rest go on', async () => {
    const p = await probeSetup('lasting');
    const consumer = new InboxConsumer({
      name: 'lasting', producer: 'test', schema: p.schema, dataSource: p.ds, transport, logger, maxAttempts: 2, outbox: p.writer, transientBudgetMs: 3_000,
      handlers: [on(p.event, async (ctx) => {
        if (ctx.payload.seq === 1) throw Object.assign(new Error('could not serialize access'), { code: '40001' });
        await p.inner.handle(ctx);
      })],
    });
    await consumer.start();
    await p.publish([1, 2, 3]);
    await waitFor('readiness degraded while the batch keeps failing', async () => !consumer.isHealthy(), 10_000, 50);
    expect((await appliedCounts(p.ds, p.schema)).rows).toBe(0);
    await waitFor('parked after its budget, the others applied', async () => (await appliedCounts(p.ds, p.schema)).rows === 2, 30_000);
    expect(await consumer.parkedCount()).toBe(1);
    await waitFor('ready again', async () => consumer.isHealthy(), 5_000, 50);
    await consumer.stop();
    await p.ds.destroy();
  });

  it('two replicas re-driving the same parked event at once apply it exactly once', async () => {
    const p = await probeSetup('redrive');
    let broken = true;
    const handlers = [on(p.event, async (ctx) => {
      if (broken && ctx.payload.seq === 7) throw new RangeError('amount out of range');
      // Hold the claim a while so the other replica's pass certainly overlaps it.
      await ctx.manager.query('SELECT pg_sleep(0.3)');
      await p.inner.handle(ctx);
    })];
    const replica = (n: number) => new InboxConsumer({
      name: 'redrive', groupId: `tollgate.redrive.${n}`, producer: 'test', schema: p.schema, dataSource: p.ds, transport, logger, maxAttempts: 2, outbox: p.writer, redriveIntervalMs: 3_600_000, handlers,
    });
    const a = replica(1);
    await a.start();
    await p.publish([7]);
    await waitFor('parked', async () => (await a.parkedCount()) === 1, 30_000);
    await a.stop();
    broken = false;
    await p.ds.query(`UPDATE "${p.schema}".parked_event SET redrive_requested_at = now()`);
    const b = replica(2);
    const resolved = await Promise.all([a.redrive(), b.redrive(), a.redrive(), b.redrive()]);
    expect(resolved.reduce((x, y) => x + y, 0)).toBe(1);
    const counts = await appliedCounts(p.ds, p.schema);
    expect(counts).toMatchObject({ rows: 1, maxTimes: 1 });
    // Asked again (an operator repeats the command): the re-drive inbox knows it, nothing is applied twice.
    await p.ds.query(`UPDATE "${p.schema}".parked_event SET redrive_requested_at = now(), resolved_at = NULL`);
    await Promise.all([a.redrive(), b.redrive()]);
    expect((await appliedCounts(p.ds, p.schema)).maxTimes).toBe(1);
    await p.ds.destroy();
  });
});
