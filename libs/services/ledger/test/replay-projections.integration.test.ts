/**
 * On the real PostgreSQL: ops replay rebuilds the ledger's projections (timelines, journal, daily
 * balances) from the hash-chained archive into shadow tables; verify finds every row that differs between the live
 * and the rebuilt projection (and nothing when they agree); swap makes the rebuilt tables live atomically, with the
 * live consumer's path working on them afterwards; a replay from a point equals one from the start; a tampered archive
 * is refused.
 */
import { type DataSource } from 'typeorm';
import { openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase, paidCallEvents, type TopicEvent } from '@tollgate/testing';
import { ledgerDataSourceOptions } from '../src/lib/ledger.datasource-options';
import { ReplayProjections } from '../src/lib/replay-projections/replay-projections';
import { PROJECTIONS, RETIRED, SHADOW } from '../src/lib/replay-projections/shadow-tables';
import { consumeLive as consumeLiveInto } from './live-ledger';

jest.setTimeout(120_000);

describe('ops replay of the ledger projections', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;
  let replay: ReplayProjections;
  const consumeLive = (events: readonly TopicEvent[]) => consumeLiveInto(ds, events);

  const count = async (sql: string) => Number((await ds.query(sql))[0].n);

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_replay');
    ds = await openServiceDataSource(ledgerDataSourceOptions(db.url));
    replay = new ReplayProjections(ds);
    await consumeLive(paidCallEvents(300));
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  it('rebuilds timelines, journal and balances from the archive equal to the live ones, row by row', async () => {
    const progress: number[] = [];
    const summary = await replay.fromArchive({}, (p) => progress.push(p.events));
    const archived = await count('SELECT count(*) AS n FROM ledger.event_archive');
    expect(summary).toMatchObject({ events: archived, archiveHead: archived });
    expect(progress.at(-1)).toBe(archived);
    for (const table of ['timeline_entry', 'journal_entry', 'journal_day']) {
      expect(await count(`SELECT count(*) AS n FROM ${SHADOW}.${table}`)).toBe(await count(`SELECT count(*) AS n FROM ledger.${table}`));
    }
    expect(await count('SELECT count(*) AS n FROM ledger.journal_entry')).toBeGreaterThan(1000);
    expect(await replay.verify(PROJECTIONS, summary.archiveHead)).toEqual([]);
  });

  it('verify names every row that differs: edited, missing on either side', async () => {
    const { archiveHead } = await replay.fromArchive({});
    const [edited] = await ds.query(`UPDATE ledger.timeline_entry SET payload = payload || '{"x":1}' WHERE event_id = (SELECT min(event_id::text)::uuid FROM ledger.timeline_entry) RETURNING event_id`);
    const [gone] = await ds.query(`DELETE FROM ledger.journal_entry WHERE (posting_id, seq) = (SELECT posting_id, seq FROM ledger.journal_entry WHERE kind = 'settle' ORDER BY posting_id LIMIT 1) RETURNING posting_id, seq`);
    await ds.query(`INSERT INTO ledger.journal_day (account, asset, day, delta) VALUES ('owner:ghost:available', 'USD', '2026-11-01', 5)`);
    const diffs = await replay.verify(PROJECTIONS, archiveHead);
    expect(diffs).toEqual(expect.arrayContaining([
      expect.objectContaining({ projection: 'timelines', key: `(${edited[0]?.event_id ?? edited.event_id})`, live: expect.any(Object), rebuilt: expect.any(Object) }),
      expect.objectContaining({ projection: 'journal', key: `(${gone[0]?.posting_id ?? gone.posting_id},${gone[0]?.seq ?? gone.seq})`, live: null, rebuilt: expect.any(Object) }),
      expect.objectContaining({ projection: 'balances', key: '(owner:ghost:available,USD,2026-11-01)', live: expect.any(Object), rebuilt: null }),
    ]));
    expect(diffs).toHaveLength(3);
    // The edited row names the column that differs, with both values; nothing else about it.
    const changed = diffs.find((d) => d.projection === 'timelines')!;
    expect(changed.columns).toHaveLength(1);
    expect(changed.columns[0]!.column).toBe('payload');
    expect(changed.columns[0]!.live).toContain('"x": 1');
    expect(changed.columns[0]!.rebuilt).not.toContain('"x": 1');
    const ghost = diffs.find((d) => d.projection === 'balances')!;
    expect(ghost.columns.find((c) => c.column === 'delta')).toEqual({ column: 'delta', live: '5', rebuilt: null });
  });

  it('swap makes the rebuilt projections live atomically; the live consumer goes on writing to them', async () => {
    const { archiveHead } = await replay.fromArchive({});
    // Events the live ledger consumes after the replay read its range are caught up by the swap.
    await consumeLive(paidCallEvents(20, { start: new Date('2026-11-20T00:00:00Z') }));
    await replay.swap(PROJECTIONS, archiveHead);
    expect(await count(`SELECT count(*) AS n FROM ${RETIRED}.journal_day WHERE account = 'owner:ghost:available'`)).toBe(1);
    expect(await count(`SELECT count(*) AS n FROM ledger.journal_day WHERE account = 'owner:ghost:available'`)).toBe(0);
    // The migrations' index names are live again, and the roll-up trigger moved with the journal.
    const indexes = (await ds.query(`SELECT indexname FROM pg_indexes WHERE schemaname = 'ledger' AND tablename = 'journal_entry'`)).map((r: { indexname: string }) => r.indexname);
    expect(indexes).toEqual(expect.arrayContaining(['journal_entry_pkey', 'journal_entry_order', 'journal_entry_owner', 'journal_entry_account']));
    await consumeLive(paidCallEvents(10, { start: new Date('2026-11-25T00:00:00Z') }));
    const { archiveHead: head } = await replay.fromArchive({});
    expect(await replay.verify(PROJECTIONS, head)).toEqual([]);
    expect(await count(`SELECT count(*) AS n FROM ledger.journal_day WHERE day = '2026-11-25'`)).toBeGreaterThan(0);
  });

  it('a replay from a position or a time equals one from the start', async () => {
    const half = Math.floor((await count('SELECT max(position) AS n FROM ledger.event_archive')) / 2);
    const fromPosition = await replay.fromArchive({ position: half });
    expect(fromPosition.events).toBeLessThan(half + 200);
    expect(await replay.verify(PROJECTIONS, fromPosition.archiveHead)).toEqual([]);
    const [{ at }] = await ds.query('SELECT archived_at AS at FROM ledger.event_archive WHERE position = $1', [half]);
    const fromTime = await replay.fromArchive({ time: at });
    expect(await replay.verify(PROJECTIONS, fromTime.archiveHead)).toEqual([]);
  });

  it('refuses to rebuild from a tampered archive, naming the position', async () => {
    await ds.query('ALTER TABLE ledger.event_archive DISABLE TRIGGER event_archive_append_only');
    await ds.query(`UPDATE ledger.event_archive SET event_text = replace(event_text, '"amountMinor":"1', '"amountMinor":"9') WHERE position = 40`);
    await ds.query('ALTER TABLE ledger.event_archive ENABLE TRIGGER event_archive_append_only');
    await expect(replay.fromArchive({})).rejects.toThrow(/position 40 \(hash_mismatch\)/);
  });
});
