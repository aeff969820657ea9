/**
 * Published outbox rows and old inbox rows are pruned; an unpublished outbox row, a recent row and a
 * parked event are never touched. Real PostgreSQL, the real messaging tables.
 */
import { randomUUID } from 'node:crypto';
import { type DataSource } from 'typeorm';
import { createTestDatabase, uniqueName } from '@tollgate/testing';
import { pruneMessagingTables } from '../src';
import { openProbeDataSource } from './probe.fixture';

jest.setTimeout(60_000);

const DAY = 86_400_000;

describe('messaging retention', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;
  const schema = uniqueName('retention');

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_retention');
    ds = await openProbeDataSource(db.url, schema);
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  const outbox = (createdDaysAgo: number, publishedDaysAgo: number | null) =>
    ds.query(`INSERT INTO "${schema}".outbox_event (event_id, topic, key, envelope, created_at, published_at) VALUES ($1, 't', 'k', '{}', $2, $3) RETURNING event_id`,
      [randomUUID(), new Date(Date.now() - createdDaysAgo * DAY), publishedDaysAgo === null ? null : new Date(Date.now() - publishedDaysAgo * DAY)]);
  const inbox = (daysAgo: number) =>
    ds.query(`INSERT INTO "${schema}".inbox_event (consumer, event_id, topic, partition, "offset", applied_at) VALUES ('c', $1, 't', 0, '1', $2)`, [randomUUID(), new Date(Date.now() - daysAgo * DAY)]);
  const count = async (table: string) => Number((await ds.query(`SELECT count(*)::int AS n FROM "${schema}".${table}`))[0].n);

  it('deletes published outbox rows past the window and old inbox rows, in batches, and nothing else', async () => {
    // 12,000 old published rows (more than two batches), 3 recent published, 2 old unpublished.
    await ds.query(`INSERT INTO "${schema}".outbox_event (event_id, topic, key, envelope, created_at, published_at)
      SELECT gen_random_uuid(), 't', 'k', '{}', now() - interval '3 days', now() - interval '3 days' FROM generate_series(1, 12000)`);
    for (let i = 0; i < 3; i++) await outbox(0.5, 0.5);
    for (let i = 0; i < 2; i++) await outbox(10, null);
    await ds.query(`INSERT INTO "${schema}".inbox_event (consumer, event_id, topic, partition, "offset", applied_at)
      SELECT 'c', gen_random_uuid(), 't', 0, g::text, now() - interval '8 days' FROM generate_series(1, 6000) g`);
    for (let i = 0; i < 4; i++) await inbox(1);
    await ds.query(`INSERT INTO "${schema}".parked_event (consumer, topic, partition, "offset", key, value, reason, parked_at) VALUES ('c', 't', 0, '9', 'k', 'v', 'r', now() - interval '90 days')`);

    const deleted = await pruneMessagingTables(ds, schema, { outboxKeepMs: DAY, inboxKeepMs: 7 * DAY });
    expect(deleted).toEqual({ outbox: 12_000, inbox: 6000 });
    expect(await count('outbox_event')).toBe(5);
    expect(Number((await ds.query(`SELECT count(*)::int AS n FROM "${schema}".outbox_event WHERE published_at IS NULL`))[0].n)).toBe(2);
    expect(await count('inbox_event')).toBe(4);
    expect(await count('parked_event')).toBe(1);
    // A second pass finds nothing more.
    expect(await pruneMessagingTables(ds, schema, { outboxKeepMs: DAY, inboxKeepMs: 7 * DAY })).toEqual({ outbox: 0, inbox: 0 });
  });
});
