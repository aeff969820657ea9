import { type DynamicModule, Module } from '@nestjs/common';
import { type ServiceRuntimeOptions } from '@tollgate/config';
import { OutboxWriter } from '@tollgate/messaging';
import { serviceDatabaseModule } from '@tollgate/persistence';
import { DispatchCallUseCase } from './dispatch-call/dispatch-call.usecase';
import { EXECUTION, EXECUTION_OPTIONS, EXECUTION_OUTBOX } from './execution.constants';
import { executionDataSourceOptions } from './execution.datasource-options';
import { ExecutionEventsHost } from './execution-events.host';
import { SyncBindingsUseCase } from './sync-bindings/sync-bindings.usecase';

/** Execution: dispatch attempts and the upstream calls. Emits CallDispatched, ResultReceived/OutcomeUnknown, EffectConfirmed/EffectRejected. */
@Module({})
export class ExecutionModule {
  static register(options: ServiceRuntimeOptions): DynamicModule {
    return {
      module: ExecutionModule,
      imports: [serviceDatabaseModule(EXECUTION, () => executionDataSourceOptions(options.databaseUrl))],
      providers: [
        { provide: EXECUTION_OPTIONS, useValue: options },
        { provide: EXECUTION_OUTBOX, useValue: new OutboxWriter(EXECUTION, EXECUTION) },
        DispatchCallUseCase,
        SyncBindingsUseCase,
        ExecutionEventsHost,
      ],
    };
  }
}
