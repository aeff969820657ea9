import { serviceDataSourceOptions } from '@tollgate/persistence';
import { type DataSourceOptions } from 'typeorm';
import { ExecutionInit1764680000000 } from './migrations/1764680000000-execution-init.migration';
import { ExecutionReconciliation1764730000000 } from './migrations/1764730000000-execution-reconciliation.migration';
import { ExecutionCallScope1764750000000 } from './migrations/1764750000000-execution-call-scope.migration';
import { ExecutionCallLife1764860000000 } from './migrations/1764860000000-execution-call-life.migration';
import { ExecutionParkedEvents1764770000000 } from './migrations/1764770000000-execution-parked-events.migration';
import { EXECUTION } from './execution.constants';
import { ExecutionOutboxHeaders1764840000000 } from './migrations/1764840000000-execution-outbox-headers.migration';
import { ExecutionDispatchedIndex1764900000000 } from './migrations/1764900000000-execution-dispatched-index.migration';
import { ExecutionParkedAnswer1764930000000 } from './migrations/1764930000000-execution-parked-answer.migration';
import { ExecutionAttemptsInTheModel1764950000000 } from './migrations/1764950000000-execution-attempts-in-the-model.migration';
import { ExecutionOutboxLease1764960000000 } from './migrations/1764960000000-execution-outbox-lease.migration';
import { ExecutionSweepVacuum1765000000001 } from './migrations/1765000000001-execution-sweep-vacuum.migration';

export function executionDataSourceOptions(url: string): DataSourceOptions {
  return serviceDataSourceOptions({ name: EXECUTION, schema: EXECUTION, url, entities: [], migrations: [ExecutionInit1764680000000, ExecutionReconciliation1764730000000, ExecutionCallScope1764750000000, ExecutionParkedEvents1764770000000, ExecutionOutboxHeaders1764840000000, ExecutionCallLife1764860000000, ExecutionDispatchedIndex1764900000000, ExecutionParkedAnswer1764930000000,
    ExecutionAttemptsInTheModel1764950000000, ExecutionOutboxLease1764960000000, ExecutionSweepVacuum1765000000001] });
}
