import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import { CallLifeEvents, CallSettled, type EventDefinition, type EventEnvelope, HoldReleased, PaymentHeld, PayoutIssued, WalletChargedBack, WalletFunded } from '@tollgate/contracts';
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
    // One consumer, one transaction per event: the timeline entry and, for money events, the journal postings.
    const journal: Partial<Record<string, (m: EntityManager, e: EventEnvelope, p: never) => Promise<void>>> = {
      [PaymentHeld.type]: (m, e, p) => this.journal.paymentHeld(m, e, p),
      [CallSettled.type]: (m, e, p) => this.journal.callSettled(m, e, p),
      [HoldReleased.type]: (m, e, p) => this.journal.holdReleased(m, e, p),
    };
    return [
      {
        name: 'ledger.timeline',
        handlers: [
          ...(CallLifeEvents as readonly EventDefinition<{ intentId: string }>[]).map((event) =>
            on(event, async ({ manager, envelope, payload }) => {
              await this.record.execute(manager, event, envelope, payload.intentId);
              await journal[event.type]?.(manager, envelope, payload as never);
            })),
          on(WalletFunded, ({ manager, envelope, payload }) => this.journal.walletFunded(manager, envelope, payload)),
          on(WalletChargedBack, ({ manager, envelope, payload }) => this.journal.walletChargedBack(manager, envelope, payload)),
          on(PayoutIssued, ({ manager, envelope, payload }) => this.journal.payoutIssued(manager, envelope, payload)),
        ],
      },
    ];
  }
}
