/**
 * Medium tier (real PostgreSQL): a consumer whose batch applier folds into the call-life model (`dedupedByModel`)
 * writes no inbox row — the model absorbs duplicates, so the per-batch inbox statement is saved —
 * while copies of one event within a batch still reach it once, and a redelivered batch reaches it again (the model's
 * job). An ordinary consumer still deduplicates through its inbox.
 */
import { randomUUID } from 'node:crypto';
import { buildEnvelope } from '@tollgate/contracts';
import { createLogger } from '@tollgate/observability';
import { createTestDatabase, uniqueName } from '@tollgate/testing';
import { type DataSource } from 'typeorm';
import { type DeliveredMessage, type EventTransport, InboxConsumer, perBatch } from '../src';
import { openProbeDataSource, probeEvent } from './probe.fixture';

jest.setTimeout(60_000);
const logger = createLogger('deduped-by-model-test', 'silent');

describe('consumers deduplicated by their model (medium tier)', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;
  let schema: string;
  const event = probeEvent('test.deduped.recorded.v1');

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_dedupe');
    schema = uniqueName('dedupe');
    ds = await openProbeDataSource(db.url, schema);
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  const message = (seq: number, offset: number): DeliveredMessage => {
    const envelope = buildEnvelope(event, { intentId: randomUUID(), seq }, { producer: 'test' });
    return { topic: event.topic, partition: 0, offset: String(offset), key: envelope.key, value: JSON.stringify(envelope), headers: {} };
  };
  const consumer = (name: string, dedupedByModel: boolean, seen: number[][]) => new InboxConsumer({
    name, producer: 'test', schema, dataSource: ds, transport: {} as EventTransport, logger,
    ...perBatch([event], async ({ events }) => void seen.push(events.map((e) => (e.payload as { seq: number }).seq)), { dedupedByModel }),
  });
  const inboxRows = async (name: string) => Number((await ds.query(`SELECT count(*)::int AS n FROM "${schema}".inbox_event WHERE consumer = $1`, [name]))[0].n);

  it('no inbox row; a copy within the batch once; a redelivered batch again', async () => {
    const seen: number[][] = [];
    const c = consumer('model', true, seen);
    const [a, b] = [message(1, 1), message(2, 2)];
    await c.onBatch([a, b, a]);
    await c.onBatch([a, b]);
    expect(seen).toEqual([[1, 2], [1, 2]]);
    expect(await inboxRows('model')).toBe(0);
  });

  it('an ordinary consumer: inbox rows, and a redelivered batch reaches it no more', async () => {
    const seen: number[][] = [];
    const c = consumer('inbox', false, seen);
    const [a, b] = [message(1, 1), message(2, 2)];
    await c.onBatch([a, b, a]);
    await c.onBatch([a, b]);
    expect(seen).toEqual([[1, 2]]);
    expect(await inboxRows('inbox')).toBe(2);
  });
});
