import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { callEvent, type CallEventType } from '@tollgate/call-life';
import { CallCancelRequested, CallRequested, type CallRequestedPayload, CatalogToolChanged, PaymentHeld } from '@tollgate/contracts';
import { EVENT_TRANSPORT, type EventTransport, on, perBatch, ServiceEventsHost, serviceEventsSettings } from '@tollgate/messaging';
import { closeUpstreamSessions } from '@tollgate/mcp-runtime';
import { HealthRegistry } from '@tollgate/observability';
import { DispatchCallUseCase } from './dispatch-call/dispatch-call.usecase';
import { RejectParkedCallUseCase } from './dispatch-call/reject-parked-call.usecase';
import { EXECUTION, EXECUTION_OPTIONS } from './execution.constants';
import { SyncBindingsUseCase } from './sync-bindings/sync-bindings.usecase';
import { type ExecutionOptions } from './execution.options';
import { ReconcileCallsUseCase } from './reconcile-calls/reconcile-calls.usecase';

@Injectable()
export class ExecutionEventsHost extends ServiceEventsHost {
  constructor(
    @InjectDataSource(EXECUTION) dataSource: DataSource,
    @Inject(EVENT_TRANSPORT) transport: EventTransport,
    @Inject(EXECUTION_OPTIONS) private readonly options: ExecutionOptions,
    health: HealthRegistry,
    private readonly dispatch: DispatchCallUseCase,
    private readonly syncBindings: SyncBindingsUseCase,
    private readonly reconcile: ReconcileCallsUseCase,
    private readonly rejectParked: RejectParkedCallUseCase,
  ) {
    super(serviceEventsSettings(EXECUTION, { dataSource, transport, health, options }));
  }

  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;

  /** The reconciler: runs on a timer, one sweep at a time, in every instance (rows are claimed, so instances never double up). */
  protected override async startBackground(): Promise<void> {
    this.timer = setInterval(() => {
      this.sweeping ??= this.reconcile.sweep().catch(() => undefined).finally(() => (this.sweeping = undefined));
    }, this.options.reconcileIntervalMs);
  }

  protected override async stopBackground(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping;
    await this.dispatch.drain();
    await closeUpstreamSessions();
  }

  protected consumers() {
    return [
      // The catalog has its own consumer, so a slow upstream call never delays binding updates.
      { name: 'execution.catalog', handlers: [on(CatalogToolChanged, ({ manager, payload }) => this.syncBindings.execute(manager, payload))] },
      {
        // The call's life: a batch's requests, holds and cancel requests, evolved with the call-life model; ready calls
        // are dispatched, calls whose agent cancelled before dispatch are cancelled.
        name: 'execution.calls',
        ...perBatch([CallRequested, PaymentHeld, CallCancelRequested], async ({ manager, events, afterCommit, within }) => {
          const dispatches = await this.dispatch.recordAll(manager, events.map((e) => ({
            event: callEvent(e.type as CallEventType, e.payload as never), eventId: e.envelope.eventId, within: <T>(fn: () => Promise<T>) => within(e, fn),
            ...(e.type === CallRequested.type ? { arguments: (e.payload as CallRequestedPayload).arguments } : {}),
          })));
          // Each provider call continues its own call's trace.
          for (const d of dispatches) await d.within(async () => afterCommit(() => this.dispatch.start(d.dispatch)));
        }, {
          dedupedByModel: true,
          // A parked request or hold: the agent gets EffectRejected (nothing sent) instead of waiting for its deadline.
          onParked: async (event, { manager, intentId, eventId }) => {
            if (event.type !== CallCancelRequested.type) await this.rejectParked.execute(manager, { ...(intentId ? { intentId } : {}), ...(eventId ? { causationId: eventId } : {}) });
          },
        }),
        // A request alone is only recorded; it waits (up to 100 ms) for its hold, which dispatches it — one transaction, not two.
        deferrable: { topics: [CallRequested.topic], upToMs: 100 },
      },
    ];
  }
}
