import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { CallRequested } from '@tollgate/contracts';
import { EVENT_TRANSPORT, type EventTransport, on, runCallWorkflow, ServiceEventsHost, serviceEventsSettings } from '@tollgate/messaging';
import { HealthRegistry } from '@tollgate/observability';
import { PAYMENT, PAYMENT_OPTIONS } from './payment.constants';
import { type PaymentOptions } from './payment.options';
import { PlaceHoldUseCase } from './place-hold/place-hold.usecase';
import { countOpenHolds } from './resolve-hold/open-holds';
import { HoldEndWorkflow } from './resolve-hold/hold-end.workflow';
import { SettleX402UseCase } from './settle-x402/settle-x402.usecase';

@Injectable()
export class PaymentEventsHost extends ServiceEventsHost {
  constructor(
    @InjectDataSource(PAYMENT) private readonly dataSource: DataSource,
    @Inject(EVENT_TRANSPORT) transport: EventTransport,
    @Inject(PAYMENT_OPTIONS) options: PaymentOptions,
    health: HealthRegistry,
    private readonly placeHold: PlaceHoldUseCase,
    private readonly holdEnds: HoldEndWorkflow,
    private readonly settleX402: SettleX402UseCase,
  ) {
    super(serviceEventsSettings(PAYMENT, { dataSource, transport, health, options }));
  }

  /** Holds placed and not yet captured or voided; x402 payments not yet settled or refused, and those whose settle outcome is unknown. */
  protected override figures() {
    return [
      { name: 'payment.holdsOpen', read: () => countOpenHolds(this.dataSource) },
      { name: 'payment.x402AttemptsOpen', read: async () => (await this.settleX402.counts()).open },
      { name: 'payment.x402SettlementsUnknown', read: async () => (await this.settleX402.counts()).unknown },
    ];
  }

  protected consumers() {
    return [
      {
        name: 'payment',
        // Embedded mode: a request's hold is decided inside the transaction that recorded the request.
        inline: [CallRequested.topic],
        handlers: [
          on(CallRequested, async ({ manager, payload, envelope, afterCommit }) => {
            // An x402 payment was recorded: verify and settle run once this transaction committed, outside it.
            if ((await this.placeHold.execute(manager, payload, envelope.eventId)) === 'x402-pending') afterCommit(() => this.settleX402.kick());
          }, {
            onParked: ({ manager, payload, intentId, eventId }) => this.placeHold.refuseParked(manager, { ...(payload ? { request: payload } : {}), ...(intentId ? { intentId } : {}), ...(eventId ? { causationId: eventId } : {}) }),
          }),
        ],
      },
      // The call's end (the route's isTerminal step): its hold captured or voided, once, through the runner.
      runCallWorkflow(this.holdEnds),
    ];
  }
}
