import { type DataSourceOptions } from 'typeorm';
import { type Column, declared, describeTable, openServiceDataSource, type Table } from '@tollgate/persistence';
import { createTestDatabase } from './infra';

/**
 * Typed tables (medium tier): each declaration — the one place a table's columns and types are written, from which
 * its row type comes — must match what the service's migrations built (the same columns, types and nullability).
 * One test per table, each on a fresh database migrated from nothing.
 */
export function expectTablesAsMigrated(service: string, options: (url: string) => DataSourceOptions, tables: readonly Table<Record<string, Column>>[]): void {
  it.each(tables.map((t) => [t.name, t] as const))('%s is declared as the migrations built it', async (_name, table) => {
    const db = await createTestDatabase(`tollgate_${service}_tables`);
    const ds = await openServiceDataSource(options(db.url));
    try {
      expect(declared(table)).toEqual(await describeTable(ds, table.name));
    } finally {
      await ds.destroy();
      await db.drop();
    }
  });
}
