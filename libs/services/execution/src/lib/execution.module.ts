import { type DynamicModule, Module } from '@nestjs/common';
import { useUpstreamCredentials } from '@tollgate/mcp-runtime';
import { adminTokenProvider } from '@tollgate/http';
import { outboxWriterProvider } from '@tollgate/messaging';
import { serviceDatabaseModule } from '@tollgate/persistence';
import { DispatchWorkflow } from './dispatch-call/dispatch.workflow';
import { DispatchCallUseCase } from './dispatch-call/dispatch-call.usecase';
import { ReadBackCases } from './dispatch-call/read-back-cases';
import { ReconcileCallsUseCase } from './reconcile-calls/reconcile-calls.usecase';
import { ReconciliationsController } from './reconcile-calls/reconciliations.controller';
import { type ExecutionOptions } from './execution.options';
import { EXECUTION, EXECUTION_ADMIN, EXECUTION_OPTIONS, EXECUTION_OUTBOX } from './execution.constants';
import { executionDataSourceOptions } from './execution.datasource-options';
import { ExecutionEventsHost } from './execution-events.host';
import { SyncBindingsUseCase } from './sync-bindings/sync-bindings.usecase';

/** Execution: dispatch attempts and the upstream calls. Emits CallDispatched, ResultReceived/OutcomeUnknown, EffectConfirmed/EffectRejected. */
@Module({})
export class ExecutionModule {
  static register(options: ExecutionOptions): DynamicModule {
    useUpstreamCredentials(options.upstreamCredentials);
    return {
      module: ExecutionModule,
      imports: [serviceDatabaseModule(EXECUTION, () => executionDataSourceOptions(options.databaseUrl))],
      controllers: [ReconciliationsController],
      providers: [
        { provide: EXECUTION_OPTIONS, useValue: options },
        outboxWriterProvider(EXECUTION_OUTBOX, EXECUTION),
        adminTokenProvider(EXECUTION_ADMIN, options.adminToken),
        DispatchCallUseCase,
        DispatchWorkflow,
        ReadBackCases,
        ReconcileCallsUseCase,
        SyncBindingsUseCase,
        ExecutionEventsHost,
      ],
      exports: [ReconcileCallsUseCase],
    };
  }
}
