import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { CallLifeEvents, CallRefunded, CallSettled, type EventDefinition, PaymentHeld, PayoutIssued, WalletFunded } from '@tollgate/contracts';
import { type ServiceRuntimeOptions } from '@tollgate/config';
import { EVENT_TRANSPORT, type EventTransport, on, ServiceEventsHost, serviceEventsSettings } from '@tollgate/messaging';
import { HealthRegistry } from '@tollgate/observability';
import { LEDGER, LEDGER_OPTIONS } from './ledger.constants';
import { ProjectJournalUseCase } from './project-journal/project-journal.usecase';
import { RecordTimelineUseCase } from './record-timeline/record-timeline.usecase';

@Injectable()
export class LedgerEventsHost extends ServiceEventsHost {
  constructor(
    @InjectDataSource(LEDGER) dataSource: DataSource,
    @Inject(EVENT_TRANSPORT) transport: EventTransport,
    @Inject(LEDGER_OPTIONS) options: ServiceRuntimeOptions,
    health: HealthRegistry,
    private readonly record: RecordTimelineUseCase,
    private readonly journal: ProjectJournalUseCase,
  ) {
    super(serviceEventsSettings(LEDGER, { dataSource, transport, health, options }));
  }

  protected consumers() {
    return [
      {
        name: 'ledger.timeline',
        handlers: (CallLifeEvents as readonly EventDefinition<{ intentId: string }>[]).map((event) =>
          on(event, ({ manager, envelope, payload }) => this.record.execute(manager, event, envelope, payload.intentId)),
        ),
      },
      {
        name: 'ledger.journal',
        handlers: [
          on(WalletFunded, ({ manager, envelope, payload }) => this.journal.walletFunded(manager, envelope, payload)),
          on(PaymentHeld, ({ manager, envelope, payload }) => this.journal.paymentHeld(manager, envelope, payload)),
          on(CallSettled, ({ manager, envelope, payload }) => this.journal.callSettled(manager, envelope, payload)),
          on(CallRefunded, ({ manager, envelope, payload }) => this.journal.callRefunded(manager, envelope, payload)),
          on(PayoutIssued, ({ manager, envelope, payload }) => this.journal.payoutIssued(manager, envelope, payload)),
        ],
      },
    ];
  }
}
