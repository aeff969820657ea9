import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import {
  CallDispatched, CallRefunded, CallSettled, CatalogToolChanged, EffectConfirmed, EffectRejected, OutcomeUnknown, PaymentHeld, PaymentRejected, ResultReceived,
} from '@tollgate/contracts';
import { EVENT_TRANSPORT, type EventTransport, on, ServiceEventsHost, serviceEventsSettings } from '@tollgate/messaging';
import { HealthRegistry } from '@tollgate/observability';
import { CallWaiters } from './call-tool/call-waiters.service';
import { CatalogIndex } from './catalog/catalog-index.service';
import { GATEWAY, GATEWAY_OPTIONS } from './gateway.constants';
import { type GatewayOptions } from './gateway.options';
import { type CallOutcomeFact, RecordOutcomeUseCase } from './record-outcome/record-outcome.usecase';
import { SyncCatalogUseCase } from './sync-catalog/sync-catalog.usecase';

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
    const fold = <P extends { intentId: string }>(toFact: (p: P) => CallOutcomeFact) =>
      async ({ manager, payload, afterCommit }: { manager: import('typeorm').EntityManager; payload: P; afterCommit(fn: () => void): void }) => {
        const fact = toFact(payload);
        await this.outcome.execute(manager, payload.intentId, fact);
        // A hold alone never completes an answer: no waiter to wake.
        if (fact.kind !== 'held') afterCommit(() => this.waiters.notify(payload.intentId));
      };
    return [
      {
        name: 'gateway.catalog',
        handlers: [on(CatalogToolChanged, async ({ manager, payload, afterCommit }) => {
          await this.catalog.execute(manager, payload);
          afterCommit(() => this.index.scheduleReload());
        })],
      },
      {
        name: 'gateway.outcomes',
        handlers: [
          on(CallDispatched, fold((p) => ({ kind: 'dispatched', providerId: p.providerId, attempt: p.attempt }))),
          on(ResultReceived, fold((p) => ({ kind: 'result', providerId: p.providerId, attempt: p.attempt, classification: p.classification, result: p.result }))),
          on(EffectConfirmed, fold((p) => ({ kind: 'confirmed', attempt: p.attempt }))),
          on(EffectRejected, fold((p) => ({ kind: 'failed', code: p.code, message: p.reason, retryable: false }))),
          on(PaymentHeld, fold((p) => ({ kind: 'held', amountMinor: p.amount.amountMinor, ...(p.x402PaymentResponse ? { x402Response: p.x402PaymentResponse } : {}) }))),
          // A payment refusal keeps its next-step fields; `stage` lets a retry with the same operation key run again (nothing was held).
          on(PaymentRejected, fold((p) => ({
            kind: 'failed', stage: 'payment', code: p.code, message: p.message, retryable: p.retryable,
            ...(p.retryAfterMs !== undefined ? { retryAfterMs: p.retryAfterMs } : {}),
            ...(p.details ? { details: p.details } : {}),
            ...(p.x402PaymentRequired ? { x402PaymentRequired: p.x402PaymentRequired } : {}),
            ...(p.final ? { final: true } : {}),
          }))),
          on(OutcomeUnknown, fold(() => ({
            kind: 'failed', code: 'IDEMPOTENCY_RESULT_UNAVAILABLE', retryable: false,
            message: 'The provider did not confirm the outcome. The call will be reconciled before any new purchase.',
          }))),
          on(CallSettled, fold((p) => ({ kind: 'settled', amountMinor: p.amount.amountMinor }))),
          on(CallRefunded, fold(() => ({ kind: 'refunded' }))),
        ],
      },
    ];
  }
}
