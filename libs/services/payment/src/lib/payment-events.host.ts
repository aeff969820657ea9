import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { EVENT_TRANSPORT, type EventTransport, runCallWorkflow, ServiceEventsHost, serviceEventsSettings } from '@tollgate/messaging';
import { HealthRegistry } from '@tollgate/observability';
import { PAYMENT, PAYMENT_OPTIONS } from './payment.constants';
import { type PaymentOptions } from './payment.options';
import { PlaceHoldWorkflow } from './place-hold/place-hold.workflow';
import { countOpenHolds } from './resolve-hold/open-holds';
import { HoldEndWorkflow } from './resolve-hold/hold-end.workflow';
import { AttemptsWake } from './attempts/attempts-wake';
import { AttemptSteps } from './place-hold/attempt-steps';
import { X402Attempts } from './attempts/x402-attempts.repository';

@Injectable()
export class PaymentEventsHost extends ServiceEventsHost {
  constructor(
    @InjectDataSource(PAYMENT) private readonly dataSource: DataSource,
    @Inject(EVENT_TRANSPORT) transport: EventTransport,
    @Inject(PAYMENT_OPTIONS) options: PaymentOptions,
    health: HealthRegistry,
    private readonly holds: PlaceHoldWorkflow,
    private readonly holdEnds: HoldEndWorkflow,
    private readonly wake: AttemptsWake,
    private readonly steps: AttemptSteps,
  ) {
    super(serviceEventsSettings(PAYMENT, { dataSource, transport, health, options }));
  }

  /** Holds placed and not yet captured or voided; x402 payments not yet settled or refused, and those whose settle outcome is unknown. */
  protected override figures() {
    return [
      { name: 'payment.holdsOpen', read: () => countOpenHolds(this.dataSource) },
      { name: 'payment.x402AttemptsOpen', read: async () => (await X402Attempts.openCounts(this.dataSource)).open },
      { name: 'payment.x402SettlementsUnknown', read: async () => (await X402Attempts.openCounts(this.dataSource)).unknown },
    ];
  }

  protected override async startBackground(): Promise<void> {
    if (this.steps.active) this.steps.warmUp();
  }

  protected consumers() {
    const requests = runCallWorkflow(this.holds);
    // An authorization left to collect at a hold's end: the outside payments' next steps are looked for at once.
    this.wake.listen(() => requests.due?.nudge());
    return [
      // The call's request (the route's spend-policy step), through the runner: held, refused, or paying by an outside
      // rail — whose steps are the same workflow's due work. Embedded mode: decided inside the request's transaction.
      requests,
      // The call's end (the route's isTerminal step): its hold captured or voided, once, through the runner.
      runCallWorkflow(this.holdEnds),
    ];
  }
}
