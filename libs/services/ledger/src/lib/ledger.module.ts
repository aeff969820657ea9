import { type DynamicModule, Module } from '@nestjs/common';
import { adminTokenProvider } from '@tollgate/http';
import { serviceDatabaseModule } from '@tollgate/persistence';
import { BalancesController } from './get-balances/balances.controller';
import { CallsController } from './get-call-timeline/calls.controller';
import { GetCallTimelineUseCase } from './get-call-timeline/get-call-timeline.usecase';
import { FinanceAuthGuard } from './finance-access/finance-auth.guard';
import { FinanceTokensController } from './finance-access/finance-tokens.controller';
import { FinanceTokensUseCase } from './finance-access/finance-tokens.usecase';
import { LEDGER, LEDGER_ADMIN, LEDGER_OPTIONS } from './ledger.constants';
import { type LedgerOptions } from './ledger.options';
import { ledgerDataSourceOptions } from './ledger.datasource-options';
import { LedgerEventsHost } from './ledger-events.host';
import { ProjectJournalUseCase } from './project-journal/project-journal.usecase';
import { RecordTimelineUseCase } from './record-timeline/record-timeline.usecase';
import { JournalController } from './query-journal/journal.controller';
import { ArchiveController } from './archive-events/archive.controller';
import { ArchiveEventUseCase } from './archive-events/archive-event.usecase';
import { VerifyArchiveUseCase } from './archive-events/verify-archive.usecase';
import { UsageExportController } from './export-usage/usage-export.controller';
import { StatementUseCase } from './query-journal/statement.usecase';
import { ConsoleController } from './finance-console/console.controller';
import { ReconciliationController } from './reconcile-books/reconciliation.controller';
import { ReconciliationUseCase } from './reconcile-books/reconciliation.usecase';

/** Ledger: read-side projections (call timelines, the double-entry journal) of every call-life and money topic, and the finance API behind finance tokens. Emits nothing. */
@Module({})
export class LedgerModule {
  static register(options: LedgerOptions): DynamicModule {
    return {
      module: LedgerModule,
      imports: [serviceDatabaseModule(LEDGER, () => ledgerDataSourceOptions(options.databaseUrl))],
      controllers: [CallsController, BalancesController, FinanceTokensController, JournalController, ArchiveController, ReconciliationController, ConsoleController, UsageExportController],
      providers: [
        { provide: LEDGER_OPTIONS, useValue: options }, adminTokenProvider(LEDGER_ADMIN, options.adminToken), FinanceTokensUseCase, FinanceAuthGuard,
        RecordTimelineUseCase, ProjectJournalUseCase, GetCallTimelineUseCase, LedgerEventsHost, StatementUseCase, ArchiveEventUseCase, VerifyArchiveUseCase, ReconciliationUseCase],
    };
  }
}
