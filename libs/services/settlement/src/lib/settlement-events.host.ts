import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { EVENT_TRANSPORT, type EventTransport, runCallWorkflow, ServiceEventsHost, serviceEventsSettings } from '@tollgate/messaging';
import { createLogger, HealthRegistry, type Logger } from '@tollgate/observability';
import { CloseVerificationUseCase } from './close-verification/close-verification.usecase';
import { VerificationWorkflow } from './record-call-fact/verification.workflow';
import { SETTLEMENT, SETTLEMENT_OPTIONS } from './settlement.constants';
import { type SettlementOptions } from './settlement.options';

@Injectable()
export class SettlementEventsHost extends ServiceEventsHost {
  private timer?: NodeJS.Timeout;
  private sweeping?: Promise<void>;
  private readonly log: Logger;

  constructor(
    @InjectDataSource(SETTLEMENT) dataSource: DataSource,
    @Inject(EVENT_TRANSPORT) transport: EventTransport,
    @Inject(SETTLEMENT_OPTIONS) private readonly options: SettlementOptions,
    health: HealthRegistry,
    private readonly verification: VerificationWorkflow,
    private readonly close: CloseVerificationUseCase,
  ) {
    const logger = createLogger(SETTLEMENT);
    super(serviceEventsSettings(SETTLEMENT, { dataSource, transport, health, options }));
    this.log = logger;
  }

  protected consumers() {
    return [
      {
        // Bookkeeping before a verification window: no agent waits on it, so it gathers events for a moment.
        lingerMs: 50,
        ...runCallWorkflow(this.verification),
      },
    ];
  }

  protected override async startBackground(): Promise<void> {
    const tick = () => {
      this.sweeping = this.close
        .execute()
        .then(() => undefined)
        .catch((err) => this.log.warn({ err }, 'verification sweep failed'))
        .finally(() => {
          if (this.timer) this.timer = setTimeout(tick, this.options.sweepIntervalMs);
        });
    };
    this.timer = setTimeout(tick, this.options.sweepIntervalMs);
  }

  protected override async stopBackground(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }
}
