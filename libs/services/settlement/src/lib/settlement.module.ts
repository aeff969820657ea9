import { type DynamicModule, Module } from '@nestjs/common';
import { OutboxWriter } from '@tollgate/messaging';
import { serviceDatabaseModule } from '@tollgate/persistence';
import { CloseVerificationUseCase } from './close-verification/close-verification.usecase';
import { RecordCallFactUseCase } from './record-call-fact/record-call-fact.usecase';
import { SETTLEMENT, SETTLEMENT_OPTIONS, SETTLEMENT_OUTBOX } from './settlement.constants';
import { settlementDataSourceOptions } from './settlement.datasource-options';
import { SettlementEventsHost } from './settlement-events.host';
import { type SettlementOptions } from './settlement.options';

/** Settlement: verification windows, captures, refunds. Emits CallSettled / CallRefunded. */
@Module({})
export class SettlementModule {
  static register(options: SettlementOptions): DynamicModule {
    return {
      module: SettlementModule,
      imports: [serviceDatabaseModule(SETTLEMENT, () => settlementDataSourceOptions(options.databaseUrl))],
      providers: [
        { provide: SETTLEMENT_OPTIONS, useValue: options },
        { provide: SETTLEMENT_OUTBOX, useValue: new OutboxWriter(SETTLEMENT, SETTLEMENT) },
        RecordCallFactUseCase,
        CloseVerificationUseCase,
        SettlementEventsHost,
      ],
    };
  }
}
