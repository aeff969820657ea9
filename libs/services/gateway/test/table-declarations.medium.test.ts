/**
 * Typed tables (medium tier): each table's declaration — the one place its columns and their types are written, from
 * which its row type comes — matches what the migrations built: the same columns, types and nullability.
 */
import { declared, describeTable, openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase } from '@tollgate/testing';
import { CALL, OPERATION_KEY } from '../src/lib/calls/calls.repository';
import { gatewayDataSourceOptions } from '../src/lib/gateway.datasource-options';

jest.setTimeout(60_000);

it.each([CALL, OPERATION_KEY].map((t) => [t.name, t]))('%s is declared as the migrations built it', async (_name, table) => {
  const db = await createTestDatabase('tollgate_gw_tables');
  const ds = await openServiceDataSource(gatewayDataSourceOptions(db.url));
  try {
    expect(declared(table)).toEqual(await describeTable(ds, table.name));
  } finally {
    await ds.destroy();
    await db.drop();
  }
});
