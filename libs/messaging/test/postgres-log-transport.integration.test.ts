/**
 * The embedded mode's event log in PostgreSQL: the same delivery contract as Kafka, events appended
 * inside producers' transactions delivered exactly once into the inbox even when long transactions commit low ids
 * late, and consumer positions that survive a restart of the transport.
 */
import { randomUUID } from 'node:crypto';
import { type DataSource } from 'typeorm';
import { createLogger } from '@tollgate/observability';
import { createTestDatabase, uniqueName, waitFor, WORKSPACE_ROOT } from '@tollgate/testing';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { DeadLetterParked } from '@tollgate/contracts';
import { type Pool } from 'pg';
import { eachMessage, InboxConsumer, on, OutboxWriter, PostgresLogTransport, READ_PLAN_CACHE_MODE } from '../src';
import { describeTransportContract } from './transport-contract';
import { appliedCounts, openProbeDataSource, probeEvent, probeHandler } from './probe.fixture';

jest.setTimeout(120_000);
const logger = createLogger('eventlog-test', process.env['TEST_LOG_LEVEL'] ?? 'silent');

let db: { url: string; drop(): Promise<void> };
const runTs = async (entry: string, args: string[]) =>
  (await promisify(execFile)(process.execPath, ['-r', '@swc-node/register', entry, ...args], { cwd: WORKSPACE_ROOT })).stdout;
beforeAll(async () => {
  db = await createTestDatabase('tollgate_eventlog');
});
afterAll(async () => db.drop());

describeTransportContract(
  'postgres log',
  async () => new PostgresLogTransport({ databaseUrl: db.url, logger, pollIntervalMs: 200 }),
  async () => [`test.${uniqueName('a')}.v1`, `test.${uniqueName('b')}.v1`],
);

describe('PostgresLogTransport with producers in the same database', () => {
  let ds: DataSource;
  let transport: PostgresLogTransport;
  const schema = uniqueName('probe');
  const topic = `test.${schema.replace(/_/g, '-')}.recorded.v1`;
  const event = probeEvent(topic);

  beforeAll(async () => {
    ds = await openProbeDataSource(db.url, schema);
    transport = new PostgresLogTransport({ databaseUrl: db.url, logger, pollIntervalMs: 5_000 });
    await transport.connect();
  });
  afterAll(async () => {
    await transport.close();
    await ds.destroy();
  });

  it('delivers 1,000 events appended by 8 concurrent transactions of different lengths: none skipped, none applied twice, no outbox row', async () => {
    const consumer = new InboxConsumer({ name: 'probe', producer: 'test', schema, dataSource: ds, transport, logger, handlers: [probeHandler(event, schema)] });
    await consumer.start();
    const writer = new OutboxWriter(schema, 'test', transport);
    // Long transactions hold low transaction ids open while short ones commit first: a reader by id alone would skip them.
    const shares = [25, 50, 75, 100, 125, 150, 200, 275];
    let next = 0;
    const commitOrder: number[] = [];
    await Promise.all(shares.map((share, t) => ds.transaction(async (m) => {
      const slices = 8 - t;
      const per = Math.ceil(share / slices);
      for (let s = 0; s < slices; s++) {
        for (let i = 0; i < per && s * per + i < share; i++) await writer.append(m, event, { intentId: randomUUID(), seq: next++ });
        await new Promise((r) => setTimeout(r, 40 * (8 - t)));
      }
    }).then(() => commitOrder.push(t))));
    expect(commitOrder[0]).toBeGreaterThan(commitOrder[commitOrder.length - 1]!);

    await waitFor('1,000 applied events', async () => (await appliedCounts(ds, schema)).rows === 1000, 60_000);
    await consumer.stop();
    const counts = await appliedCounts(ds, schema);
    expect(counts.seqs).toEqual(Array.from({ length: 1000 }, (_, i) => i));
    expect(counts.maxTimes).toBe(1);
    const [{ outbox }] = await ds.query(`SELECT count(*)::int AS outbox FROM "${schema}".outbox_event`);
    expect(outbox).toBe(0);
  });

  it('parks an event whose handler keeps failing after bounded retries, goes on with the events behind it, and re-drives it on request after a fix', async () => {
    const poisonSchema = uniqueName('poison');
    const pds = await openProbeDataSource(db.url, poisonSchema);
    const poisonTopic = `test.${poisonSchema.replace(/_/g, '-')}.recorded.v1`;
    const poisonEvent = probeEvent(poisonTopic);
    let broken = true;
    const inner = probeHandler(poisonEvent, poisonSchema);
    const consumer = new InboxConsumer({
      name: 'poison', producer: 'test', schema: poisonSchema, dataSource: pds, transport, logger, maxAttempts: 3, redriveIntervalMs: 200,
      outbox: new OutboxWriter(poisonSchema, 'test', transport),
      handlers: [on(poisonEvent, async (ctx) => {
        if (broken && ctx.payload.seq === 3) throw new RangeError('amount out of range');
        await inner.handle(ctx);
      })],
    });
    await consumer.start();
    const writer = new OutboxWriter(poisonSchema, 'test', transport);
    // One partition: the failing event sits in front of the ones after it (other tenants' calls).
    await pds.transaction(async (m) => {
      for (let seq = 1; seq <= 6; seq++) await writer.append(m, poisonEvent, { intentId: randomUUID(), seq });
    });
    await waitFor('the events behind the poison applied', async () => (await appliedCounts(pds, poisonSchema)).rows === 5, 30_000);
    expect((await appliedCounts(pds, poisonSchema)).seqs).toEqual([1, 2, 4, 5, 6]);
    expect(await consumer.parkedCount()).toBe(1);
    const [parked] = await pds.query(`SELECT reason, topic FROM "${poisonSchema}".parked_event`);
    expect(parked.reason).toMatch(/failed 3 times: RangeError: amount out of range/);
    const [dlq] = await pds.query(`SELECT count(*)::int AS n FROM eventlog.event WHERE topic = $1 AND value LIKE $2`, [DeadLetterParked.topic, `%${poisonTopic}%`]);
    expect(dlq.n).toBe(1);

    // The fix ships; ops request the re-drive with the CLI, and the consumer applies the event once.
    broken = false;
    const cli = await runTs('tools/ops/src/tollgate-ops.ts', ['parked', '--database-url', db.url, 'redrive', '--service', poisonSchema]);
    expect(JSON.parse(cli)).toEqual({ service: poisonSchema, requested: 1 });
    await waitFor('re-driven', async () => (await appliedCounts(pds, poisonSchema)).rows === 6, 30_000);
    expect(await consumer.parkedCount()).toBe(0);
    const listed = JSON.parse(await runTs('tools/ops/src/tollgate-ops.ts', ['parked', '--database-url', db.url, 'list', '--service', poisonSchema, '--all'])) as { parked: { resolvedAt: string | null }[] };
    expect(listed.parked).toHaveLength(1);
    expect(listed.parked[0]!.resolvedAt).not.toBeNull();
    await consumer.stop();
    expect((await appliedCounts(pds, poisonSchema)).maxTimes).toBe(1);
    await pds.destroy();
  });

  it('a rolled-back transaction leaves nothing in the log', async () => {
    const seen: string[] = [];
    const sub = await transport.subscribe({ groupId: `rb-${randomUUID()}`, topics: [topic], fromBeginning: false, handleBatch: eachMessage(async (m) => void seen.push(m.key)) });
    const writer = new OutboxWriter(schema, 'test', transport);
    const kept = randomUUID();
    const dropped = randomUUID();
    await ds.transaction((m) => writer.append(m, event, { intentId: dropped, seq: 1 }).then(() => Promise.reject(new Error('roll back')))).catch(() => undefined);
    await ds.transaction((m) => writer.append(m, event, { intentId: kept, seq: 2 }));
    await waitFor('the committed event', () => seen.includes(kept));
    await sub.stop();
    expect(seen).toEqual([kept]);
  });

  it('a group resumes from its saved position after the transport restarts: nothing missed, nothing handed twice', async () => {
    const groupId = `resume-${randomUUID()}`;
    const seen: number[] = [];
    const handleBatch = eachMessage(async (m) => void seen.push(JSON.parse(m.value).n));
    const first = await transport.subscribe({ groupId, topics: [topic], fromBeginning: false, handleBatch });
    const key = randomUUID();
    await transport.publish(Array.from({ length: 10 }, (_, n) => ({ topic, key, value: JSON.stringify({ n }) })));
    await waitFor('10 seen', () => seen.length === 10);
    await first.stop();
    await transport.close();
    await transport.publish([]).catch(() => undefined);

    transport = new PostgresLogTransport({ databaseUrl: db.url, logger, pollIntervalMs: 5_000 });
    await transport.connect();
    await transport.publish(Array.from({ length: 5 }, (_, i) => ({ topic, key, value: JSON.stringify({ n: 10 + i }) })));
    const second = await transport.subscribe({ groupId, topics: [topic], fromBeginning: true, handleBatch });
    await waitFor('15 seen', () => seen.length >= 15);
    await second.stop();
    expect(seen).toEqual(Array.from({ length: 15 }, (_, i) => i));
  });

  it('a long transaction, an idle one, and one that wrote an event hold back only their own rows; nobody re-reads while they wait', async () => {
    const seen: number[] = [];
    const groupId = `long-${randomUUID()}`;
    const sub = await transport.subscribe({ groupId, topics: [topic], fromBeginning: false, handleBatch: eachMessage(async (m) => void seen.push(JSON.parse(m.value).payload.seq)) });
    const writer = new OutboxWriter(schema, 'test', transport);
    // An idle session in a transaction with an id (a migration, a replay's index build, a forgotten psql), and one
    // that appended an event and has not committed yet.
    const idle = await ds.createQueryRunner();
    await idle.startTransaction();
    await idle.query('SELECT pg_current_xact_id()');
    const slow = await ds.createQueryRunner();
    await slow.startTransaction();
    await writer.append(slow.manager, event, { intentId: randomUUID(), seq: 0 });
    for (let seq = 1; seq <= 30; seq++) await ds.transaction((m) => writer.append(m, event, { intentId: randomUUID(), seq }));
    await waitFor('30 events while both transactions stay open', () => seen.length === 30, 5_000);
    expect(seen).toEqual(Array.from({ length: 30 }, (_, i) => i + 1));
    const before = transport.deliveryCounts();
    await new Promise((r) => setTimeout(r, 1_500));
    // Waiting is sleeping: at most the fallback poll's and the position's reads in 1.5 s, never a 2 ms spin.
    expect(transport.deliveryCounts().reads - before.reads).toBeLessThanOrEqual(8);
    await slow.commitTransaction();
    await waitFor('the slow transaction’s event once it commits', () => seen.includes(0), 5_000);
    await idle.rollbackTransaction();
    await Promise.all([idle.release(), slow.release()]);
    await sub.stop();
    expect(seen.filter((s) => s === 0)).toHaveLength(1);
  });

  it('hands committed events to the consumers in this process without reading the log; another process’s arrive by NOTIFY and a read', async () => {
    const seen: string[] = [];
    const sub = await transport.subscribe({ groupId: `hand-${randomUUID()}`, topics: [topic], fromBeginning: false, handleBatch: eachMessage(async (m) => void seen.push(m.key)) });
    await waitFor('the first read', () => transport.deliveryCounts().reads > 0);
    const writer = new OutboxWriter(schema, 'test', transport);
    const before = transport.deliveryCounts();
    const keys: string[] = [];
    for (let i = 0; i < 40; i++) {
      const intentId = randomUUID();
      keys.push(intentId);
      await ds.transaction((m) => writer.append(m, event, { intentId, seq: i }));
      await waitFor('handed on', () => seen.includes(intentId), 2_000);
    }
    const after = transport.deliveryCounts();
    expect(after.handedOn - before.handedOn).toBe(40);
    expect(after.reads - before.reads).toBeLessThanOrEqual(6);
    // A second transport stands for another process: its append is not handed on here, NOTIFY brings it.
    const other = new PostgresLogTransport({ databaseUrl: db.url, logger, pollIntervalMs: 60_000 });
    await other.connect();
    const foreign = randomUUID();
    await other.publish([{ topic, key: foreign, value: JSON.stringify({ payload: { seq: 99 } }) }]);
    await waitFor('the other process’s event', () => seen.includes(foreign), 5_000);
    await other.close();
    await sub.stop();
    expect(seen).toEqual([...keys, foreign]);
  });

  it('a deferrable topic waits for the message the consumer acts on, which ends the wait at once; alone it waits no longer than upToMs', async () => {
    const urgentTopic = `${topic.replace(/\.v1$/, '')}-urgent.v1`;
    const urgent = probeEvent(urgentTopic);
    const batches: string[][] = [];
    const sub = await transport.subscribe({
      groupId: `defer-${randomUUID()}`, topics: [topic, urgentTopic], fromBeginning: false, deferrable: { topics: [topic], upToMs: 1_500 },
      handleBatch: async (messages) => void batches.push(messages.map((m) => m.topic)),
    });
    await waitFor('the first read', () => transport.deliveryCounts().reads > 0);
    const writer = new OutboxWriter(schema, 'test', transport);
    const intentId = randomUUID();
    await ds.transaction((m) => writer.append(m, event, { intentId, seq: 1 }));
    await new Promise((r) => setTimeout(r, 300));
    expect(batches).toEqual([]);
    const urgentAt = Date.now();
    await ds.transaction((m) => writer.append(m, urgent, { intentId, seq: 2 }));
    await waitFor('the gathered batch', () => batches.length > 0, 1_000);
    expect(Date.now() - urgentAt).toBeLessThan(1_000);
    expect(batches).toEqual([[topic, urgentTopic]]);
    const aloneAt = Date.now();
    await ds.transaction((m) => writer.append(m, event, { intentId: randomUUID(), seq: 3 }));
    await waitFor('the lone deferrable message', () => batches.length > 1, 5_000);
    expect(Date.now() - aloneAt).toBeGreaterThanOrEqual(1_400);
    expect(batches[1]).toEqual([topic]);
    await sub.stop();
  });

  it('plans its read on every run: a generic plan walked the whole log in id order, so its cost grew with the log', async () => {
    // The growth run measured it: ~180 ms per read at 230k rows once PostgreSQL switched the prepared read to a generic plan.
    const pool = (transport as unknown as { pool: Pool }).pool;
    const sessions = await Promise.all([pool.query('SHOW plan_cache_mode'), pool.query('SHOW plan_cache_mode')]);
    for (const s of sessions) expect(s.rows[0]).toEqual({ plan_cache_mode: READ_PLAN_CACHE_MODE });
    expect(READ_PLAN_CACHE_MODE).toBe('force_custom_plan');
  });
});
