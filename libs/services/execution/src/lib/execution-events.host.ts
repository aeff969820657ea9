import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { CatalogToolChanged } from '@tollgate/contracts';
import { EVENT_TRANSPORT, type EventTransport, on, runCallWorkflow, ServiceEventsHost, serviceEventsSettings } from '@tollgate/messaging';
import { closeUpstreamSessions } from '@tollgate/mcp-runtime';
import { HealthRegistry } from '@tollgate/observability';
import { DispatchWorkflow } from './dispatch-call/dispatch.workflow';
import { EXECUTION, EXECUTION_OPTIONS } from './execution.constants';
import { SyncBindingsUseCase } from './sync-bindings/sync-bindings.usecase';
import { type ExecutionOptions } from './execution.options';

@Injectable()
export class ExecutionEventsHost extends ServiceEventsHost {
  constructor(
    @InjectDataSource(EXECUTION) dataSource: DataSource,
    @Inject(EVENT_TRANSPORT) transport: EventTransport,
    @Inject(EXECUTION_OPTIONS) options: ExecutionOptions,
    health: HealthRegistry,
    private readonly syncBindings: SyncBindingsUseCase,
    private readonly calls: DispatchWorkflow,
  ) {
    super(serviceEventsSettings(EXECUTION, { dataSource, transport, health, options }));
  }

  /** The calls in flight have ended (the messaging stop waits for them): their sessions can close. */
  protected override async afterEventsStopped(): Promise<void> {
    await closeUpstreamSessions();
  }

  protected consumers() {
    return [
      // The catalog has its own consumer, so a slow upstream call never delays binding updates.
      { name: 'execution.catalog', handlers: [on(CatalogToolChanged, ({ manager, payload }) => this.syncBindings.execute(manager, payload))] },
      // The call's life, run by the workflow runner over what the route says execution reads: ready calls are
      // dispatched, calls whose agent cancelled before dispatch are cancelled; its due work is the reconciler's rounds. Embedded mode (the route's delivery): a
      // hold dispatches inside the transaction that placed it (the call goes out after that commit), and a request
      // alone waits for its hold, which dispatches it — one transaction, not two.
      runCallWorkflow(this.calls),
    ];
  }
}
