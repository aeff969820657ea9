/**
 * Medium tier (real PostgreSQL): migrations that replicas cannot race. Two instances of one service (the ledger's data
 * layer, each its own pool and sessions, as two replicas have) start on an empty database at the same moment: both
 * come up, and each migration is applied once. A database migrated by a newer build is refused before anything runs.
 */
import { DataSource } from 'typeorm';
import { openServiceDataSource, SchemaAheadError } from '@tollgate/persistence';
import { createTestDatabase } from '@tollgate/testing';
import { ledgerDataSourceOptions } from '../src/lib/ledger.datasource-options';

jest.setTimeout(60_000);

describe('migrations replicas cannot race (medium tier)', () => {
  let db: { url: string; drop(): Promise<void> };
  beforeEach(async () => {
    db = await createTestDatabase('tollgate_migrate_race');
  });
  afterEach(async () => {
    await db.drop();
  });

  it('two instances on an empty database at once: both start, every migration applied once', async () => {
    const both = await Promise.allSettled([openServiceDataSource(ledgerDataSourceOptions(db.url)), openServiceDataSource(ledgerDataSourceOptions(db.url))]);
    expect(both.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled']);
    const [a, b] = both.map((r) => (r as PromiseFulfilledResult<DataSource>).value);
    try {
      const rows = (await a!.query('SELECT name, count(*)::int AS n FROM ledger.migrations GROUP BY name')) as { name: string; n: number }[];
      expect(rows.length).toBe(a!.migrations.length);
      expect(rows.every((r) => r.n === 1)).toBe(true);
    } finally {
      await a!.destroy();
      await b!.destroy();
    }
  });

  it('a schema migrated by a newer build is refused with a clear message, and nothing is changed', async () => {
    const first = await openServiceDataSource(ledgerDataSourceOptions(db.url));
    await first.query(`INSERT INTO ledger.migrations (timestamp, name) VALUES (1999999999999, 'LedgerFromTheFuture1999999999999')`);
    const before = (await first.query('SELECT count(*)::int AS n FROM ledger.migrations'))[0].n;
    await first.destroy();
    await expect(openServiceDataSource(ledgerDataSourceOptions(db.url))).rejects.toThrow(SchemaAheadError);
    await expect(openServiceDataSource(ledgerDataSourceOptions(db.url))).rejects.toThrow(/"ledger" schema was migrated by a newer build \(LedgerFromTheFuture1999999999999 unknown here\)/);
    const check = await new DataSource(ledgerDataSourceOptions(db.url)).initialize();
    expect((await check.query('SELECT count(*)::int AS n FROM ledger.migrations'))[0].n).toBe(before);
    await check.destroy();
  });
});
