import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { CallRequested } from '@tollgate/contracts';
import { EVENT_TRANSPORT, type EventTransport, runCallWorkflow, ServiceEventsHost, serviceEventsSettings } from '@tollgate/messaging';
import { HealthRegistry } from '@tollgate/observability';
import { PAYMENT, PAYMENT_OPTIONS } from './payment.constants';
import { type PaymentOptions } from './payment.options';
import { PlaceHoldWorkflow } from './place-hold/place-hold.workflow';
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
    private readonly holds: PlaceHoldWorkflow,
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
        // The call's request (the route's spend-policy step), through the runner: held, refused, or paying by an outside rail.
        ...runCallWorkflow(this.holds),
        // Embedded mode: a request's hold is decided inside the transaction that recorded the request.
        inline: [CallRequested.topic],
      },
      // The call's end (the route's isTerminal step): its hold captured or voided, once, through the runner.
      runCallWorkflow(this.holdEnds),
    ];
  }
}
