import { type DynamicModule, Module } from '@nestjs/common';
import { type ServiceRuntimeOptions } from '@tollgate/config';
import { serviceDatabaseModule } from '@tollgate/persistence';
import { BalancesController } from './get-balances/balances.controller';
import { CallsController } from './get-call-timeline/calls.controller';
import { GetCallTimelineUseCase } from './get-call-timeline/get-call-timeline.usecase';
import { LEDGER, LEDGER_OPTIONS } from './ledger.constants';
import { ledgerDataSourceOptions } from './ledger.datasource-options';
import { LedgerEventsHost } from './ledger-events.host';
import { ProjectJournalUseCase } from './project-journal/project-journal.usecase';
import { RecordTimelineUseCase } from './record-timeline/record-timeline.usecase';

/** Ledger: read-side projections (call timelines, the double-entry journal) of every call-life and money topic, and the finance API. Emits nothing. */
@Module({})
export class LedgerModule {
  static register(options: ServiceRuntimeOptions): DynamicModule {
    return {
      module: LedgerModule,
      imports: [serviceDatabaseModule(LEDGER, () => ledgerDataSourceOptions(options.databaseUrl))],
      controllers: [CallsController, BalancesController],
      providers: [{ provide: LEDGER_OPTIONS, useValue: options }, RecordTimelineUseCase, ProjectJournalUseCase, GetCallTimelineUseCase, LedgerEventsHost],
    };
  }
}
