import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { EVENT_TRANSPORT, type EventTransport, runCallWorkflow, ServiceEventsHost, serviceEventsSettings } from '@tollgate/messaging';
import { HealthRegistry } from '@tollgate/observability';
import { VerificationWorkflow } from './record-call-fact/verification.workflow';
import { SETTLEMENT, SETTLEMENT_OPTIONS } from './settlement.constants';
import { type SettlementOptions } from './settlement.options';

@Injectable()
export class SettlementEventsHost extends ServiceEventsHost {
  constructor(
    @InjectDataSource(SETTLEMENT) dataSource: DataSource,
    @Inject(EVENT_TRANSPORT) transport: EventTransport,
    @Inject(SETTLEMENT_OPTIONS) options: SettlementOptions,
    health: HealthRegistry,
    private readonly verification: VerificationWorkflow,
  ) {
    super(serviceEventsSettings(SETTLEMENT, { dataSource, transport, health, options }));
  }

  protected consumers() {
    return [
      {
        // Bookkeeping before a verification window: no agent waits on it, so it gathers events for a moment. The
        // window's end is a wake-up of the call the runner delivers (due work), not a sweep of this host's own.
        lingerMs: 50,
        ...runCallWorkflow(this.verification),
      },
    ];
  }
}
