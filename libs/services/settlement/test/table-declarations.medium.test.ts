/**
 * Typed tables (medium tier): each table's declaration — the one place its columns and their types are written, from
 * which its row type comes — matches what the migrations built: the same columns, types and nullability.
 */
import { declared, describeTable, openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase } from '@tollgate/testing';
import { VERIFICATION } from '../src/lib/record-call-fact/verification.repository';
import { settlementDataSourceOptions } from '../src/lib/settlement.datasource-options';

jest.setTimeout(60_000);

it.each([VERIFICATION].map((t) => [t.name, t]))('%s is declared as the migrations built it', async (_name, table) => {
  const db = await createTestDatabase('tollgate_settle_tables');
  const ds = await openServiceDataSource(settlementDataSourceOptions(db.url));
  try {
    expect(declared(table)).toEqual(await describeTable(ds, table.name));
  } finally {
    await ds.destroy();
    await db.drop();
  }
});
