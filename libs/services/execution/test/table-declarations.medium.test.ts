/** Typed tables (medium tier): execution's declarations match its migrations. */
import { expectTablesAsMigrated } from '@tollgate/testing';
import { PENDING_CALL, TOOL_BINDING } from '../src/lib/dispatch-call/pending-calls.repository';
import { executionDataSourceOptions } from '../src/lib/execution.datasource-options';
import { RECONCILIATION } from '../src/lib/dispatch-call/reconciliations.repository';

jest.setTimeout(60_000);

describe('execution\'s tables', () => expectTablesAsMigrated('exec', executionDataSourceOptions, [PENDING_CALL, TOOL_BINDING, RECONCILIATION]));
