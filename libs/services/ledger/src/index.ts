export * from './lib/ledger.module';
export * from './lib/ledger.datasource-options';
export { LEDGER } from './lib/ledger.constants';
export * from './lib/ledger-app.config';
export * from './lib/ledger.options';
export { FinanceTokensUseCase } from './lib/finance-access/finance-tokens.usecase';
export { JournalRepository } from './lib/query-journal/journal.repository';
export { StatementUseCase } from './lib/query-journal/statement.usecase';
