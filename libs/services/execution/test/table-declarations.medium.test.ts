/** Typed tables (medium tier): execution's declarations match its migrations. */
import { expectTablesAsMigrated } from '@tollgate/testing';
import { DISPATCH_ATTEMPT, RECONCILIATION } from '../src/lib/dispatch-call/dispatch-attempts.repository';
import { PENDING_CALL, TOOL_BINDING } from '../src/lib/dispatch-call/pending-calls.repository';
import { executionDataSourceOptions } from '../src/lib/execution.datasource-options';

jest.setTimeout(60_000);

describe('execution\'s tables', () => expectTablesAsMigrated('exec', executionDataSourceOptions, [PENDING_CALL, TOOL_BINDING, DISPATCH_ATTEMPT, RECONCILIATION]));
