/**
 * Typed tables (medium tier): each table's declaration — the one place its columns and their types are written, from
 * which its row type comes — matches what the migrations built: the same columns, types and nullability.
 */
import { declared, describeTable, openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase } from '@tollgate/testing';
import { DISPATCH_ATTEMPT, RECONCILIATION } from '../src/lib/dispatch-call/dispatch-attempts.repository';
import { PENDING_CALL, TOOL_BINDING } from '../src/lib/dispatch-call/pending-calls.repository';
import { executionDataSourceOptions } from '../src/lib/execution.datasource-options';

jest.setTimeout(60_000);

it.each([PENDING_CALL, TOOL_BINDING, DISPATCH_ATTEMPT, RECONCILIATION].map((t) => [t.name, t]))('%s is declared as the migrations built it', async (_name, table) => {
  const db = await createTestDatabase('tollgate_exec_tables');
  const ds = await openServiceDataSource(executionDataSourceOptions(db.url));
  try {
    expect(declared(table)).toEqual(await describeTable(ds, table.name));
  } finally {
    await ds.destroy();
    await db.drop();
  }
});
