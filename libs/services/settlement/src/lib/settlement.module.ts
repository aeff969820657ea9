import { type DynamicModule, Module } from '@nestjs/common';
import { adminTokenProvider } from '@tollgate/http';
import { outboxWriterProvider } from '@tollgate/messaging';
import { serviceDatabaseModule } from '@tollgate/persistence';
import { VerificationWorkflow } from './record-call-fact/verification.workflow';
import { IssuePayoutUseCase } from './issue-payout/issue-payout.usecase';
import { PayoutsController } from './issue-payout/payouts.controller';
import { SETTLEMENT, SETTLEMENT_ADMIN, SETTLEMENT_OPTIONS, SETTLEMENT_OUTBOX } from './settlement.constants';
import { settlementDataSourceOptions } from './settlement.datasource-options';
import { SettlementEventsHost } from './settlement-events.host';
import { type SettlementOptions } from './settlement.options';

/** Settlement: verification windows, captures (fee split), refunds, provider payables, statements and payouts. Emits CallSettled / CallRefunded / PayoutIssued. */
@Module({})
export class SettlementModule {
  static register(options: SettlementOptions): DynamicModule {
    return {
      module: SettlementModule,
      imports: [serviceDatabaseModule(SETTLEMENT, () => settlementDataSourceOptions(options.databaseUrl))],
      controllers: [PayoutsController],
      providers: [
        { provide: SETTLEMENT_OPTIONS, useValue: options },
        adminTokenProvider(SETTLEMENT_ADMIN, options.adminToken),
        IssuePayoutUseCase,
        outboxWriterProvider(SETTLEMENT_OUTBOX, SETTLEMENT),
        VerificationWorkflow,
        SettlementEventsHost,
      ],
    };
  }
}
