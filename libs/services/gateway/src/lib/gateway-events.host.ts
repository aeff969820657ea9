import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import {
  CallDispatched, CallRefunded, CallSettled, CatalogToolChanged, EffectConfirmed, EffectRejected, OutcomeUnknown, PaymentHeld, PaymentRejected, ResultReceived,
} from '@tollgate/contracts';
import { callEvent, type CallEventType } from '@tollgate/call-life';
import { EVENT_TRANSPORT, type EventTransport, on, perBatch, ServiceEventsHost, serviceEventsSettings } from '@tollgate/messaging';
import { HealthRegistry } from '@tollgate/observability';
import { CallWaiters } from './call-tool/call-waiters.service';
import { CatalogIndex } from './catalog/catalog-index.service';
import { GATEWAY, GATEWAY_OPTIONS } from './gateway.constants';
import { type GatewayOptions } from './gateway.options';
import { RecordOutcomeUseCase } from './record-outcome/record-outcome.usecase';
import { SyncCatalogUseCase } from './sync-catalog/sync-catalog.usecase';

/**
 * Facts that never answer a call: alone they may wait for the ones that do, so a paid call's hold,
 * dispatch and result are folded in one transaction instead of three. They reach the state within DEFER_MS either way.
 */
const NEVER_ANSWERING = [PaymentHeld, CallDispatched, CallSettled];
/** How long a fact that never answers may wait for one that does. */
const DEFER_MS = 100;

/** The events of other services that the gateway folds into its calls' states. */
const OUTCOME_EVENTS = [CallDispatched, ResultReceived, EffectConfirmed, EffectRejected, PaymentHeld, PaymentRejected, OutcomeUnknown, CallSettled, CallRefunded];

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
        name: 'gateway.outcomes',
        ...perBatch(OUTCOME_EVENTS, async ({ events, manager, afterCommit }) => {
          const answered = await this.outcome.execute(manager, events.map((e) => callEvent(e.type as CallEventType, e.payload as never)));
          afterCommit(() => answered.forEach((intentId) => this.waiters.notify(intentId)));
        }, { dedupedByModel: true }),
        deferrable: { topics: NEVER_ANSWERING.map((e) => e.topic), upToMs: DEFER_MS },
      },
    ];
  }
}
