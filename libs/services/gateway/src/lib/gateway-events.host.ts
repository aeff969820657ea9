import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { CallProgressed, CatalogToolChanged } from '@tollgate/contracts';
import { EVENT_TRANSPORT, type EventTransport, on, runCallWorkflow, ServiceEventsHost, serviceEventsSettings } from '@tollgate/messaging';
import { HealthRegistry } from '@tollgate/observability';
import { CallWaiters } from './call-tool/call-waiters.service';
import { CatalogIndex } from './catalog/catalog-index.service';
import { GATEWAY, GATEWAY_OPTIONS } from './gateway.constants';
import { type GatewayOptions } from './gateway.options';
import { OutcomeWorkflow } from './record-outcome/outcome.workflow';
import { SyncCatalogUseCase } from './sync-catalog/sync-catalog.usecase';

@Injectable()
export class GatewayEventsHost extends ServiceEventsHost {
  constructor(
    @InjectDataSource(GATEWAY) dataSource: DataSource,
    @Inject(EVENT_TRANSPORT) transport: EventTransport,
    @Inject(GATEWAY_OPTIONS) options: GatewayOptions,
    health: HealthRegistry,
    private readonly outcomes: OutcomeWorkflow,
    private readonly catalog: SyncCatalogUseCase,
    private readonly index: CatalogIndex,
    private readonly waiters: CallWaiters,
  ) {
    super(serviceEventsSettings(GATEWAY, { dataSource, transport, health, options }));
  }

  protected consumers() {
    return [
      {
        name: 'gateway.catalog',
        handlers: [on(CatalogToolChanged, async ({ manager, payload, afterCommit }) => {
          await this.catalog.execute(manager, payload);
          afterCommit(() => this.index.scheduleReload());
        })],
      },
      {
        // A provider's progress, for the waiting request that asked for it (on whichever replica holds it). A notice,
        // not a fact: a redelivery only repeats a value the request's relay drops (progress only increases).
        name: 'gateway.progress',
        handlers: [on(CallProgressed, ({ manager, payload }) => this.waiters.announceProgress(manager, payload))],
        dedupedByModel: true,
      },
      // The call's life, run by the workflow runner over what the route says the gateway reads. Embedded mode (the
      // route's delivery): what the answer needs (the hold, and every fact that may answer) is folded inside the
      // transaction that wrote it, so the answer commits with the result; the dispatch and the settlement wait to be
      // folded together, off the critical path.
      runCallWorkflow(this.outcomes),
    ];
  }
}
