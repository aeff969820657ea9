import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { CatalogToolChanged } from '@tollgate/contracts';
import { callEvent, type CallEventType } from '@tollgate/call-life';
import { EVENT_TRANSPORT, type EventTransport, on, perBatch, ServiceEventsHost, serviceEventsSettings } from '@tollgate/messaging';
import { HealthRegistry } from '@tollgate/observability';
import { CallWaiters } from './call-tool/call-waiters.service';
import { CatalogIndex } from './catalog/catalog-index.service';
import { GATEWAY, GATEWAY_OPTIONS } from './gateway.constants';
import { type GatewayOptions } from './gateway.options';
import { ANSWERING_TOPICS, NEVER_ANSWERING, OUTCOME_EVENTS, OUTCOMES_CONSUMER } from './record-outcome/outcome-events';
import { RecordOutcomeUseCase } from './record-outcome/record-outcome.usecase';
import { SyncCatalogUseCase } from './sync-catalog/sync-catalog.usecase';

/** How long a fact that never answers may wait for one that does (it reaches the state within DEFER_MS either way). */
const DEFER_MS = 100;

@Injectable()
export class GatewayEventsHost extends ServiceEventsHost {
  constructor(
    @InjectDataSource(GATEWAY) dataSource: DataSource,
    @Inject(EVENT_TRANSPORT) transport: EventTransport,
    @Inject(GATEWAY_OPTIONS) options: GatewayOptions,
    health: HealthRegistry,
    private readonly outcome: RecordOutcomeUseCase,
    private readonly catalog: SyncCatalogUseCase,
    private readonly waiters: CallWaiters,
    private readonly index: CatalogIndex,
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
        // The call's life: each batch loads its calls' states, evolves them with the call-life model, saves them.
        name: OUTCOMES_CONSUMER,
        ...perBatch(OUTCOME_EVENTS, async ({ events, manager, afterCommit }) => {
          const answered = await this.outcome.execute(manager, events.map((e) => callEvent(e.type as CallEventType, e.payload as never)));
          afterCommit(() => answered.forEach((intentId) => this.waiters.notify(intentId)));
        }, {
          dedupedByModel: true,
          // A parked fact that could answer the call: its waiting agent is woken and told the outcome is held for
          // review (the park itself is what it reads, so this holds even when gateway.call is what keeps failing).
          onParked: async (event, { manager, intentId }) => {
            if (intentId && ANSWERING_TOPICS.includes(event.topic)) await this.waiters.wakeEverywhere(manager, intentId);
          },
          // That answer is provisional: a re-drive folds the fact, and the same key then replays the call's verdict.
          redriveAfterAnswer: true,
        }),
        deferrable: { topics: NEVER_ANSWERING.map((e) => e.topic), upToMs: DEFER_MS },
      },
    ];
  }
}
