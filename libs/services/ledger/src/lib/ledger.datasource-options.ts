import { serviceDataSourceOptions } from '@tollgate/persistence';
import { type DataSourceOptions } from 'typeorm';
import { LedgerInit1764680000000 } from './migrations/1764680000000-ledger-init.migration';
import { LedgerJournal1764750000000 } from './migrations/1764750000000-ledger-journal.migration';
import { LedgerAccessTokens1764760000000 } from './migrations/1764760000000-ledger-access-tokens.migration';
import { LedgerParkedEvents1764770000000 } from './migrations/1764770000000-ledger-parked-events.migration';
import { LedgerFinanceApi1764800000000 } from './migrations/1764800000000-ledger-finance-api.migration';
import { LedgerJournalDayScopes1764810000000 } from './migrations/1764810000000-ledger-journal-day-scopes.migration';
import { LedgerEventArchive1764820000000 } from './migrations/1764820000000-ledger-event-archive.migration';
import { LedgerOperationKeyIndex1764830000000 } from './migrations/1764830000000-ledger-operation-key-index.migration';
import { LEDGER } from './ledger.constants';
import { LedgerCallFilters1764920000000 } from './migrations/1764920000000-ledger-call-filters.migration';
import { LedgerOutboxHeaders1764840000000 } from './migrations/1764840000000-ledger-outbox-headers.migration';
import { LedgerParkedAnswer1764930000000 } from './migrations/1764930000000-ledger-parked-answer.migration';
import { LedgerSettledIndex1765100000000 } from './migrations/1765100000000-ledger-settled-index.migration';
import { LedgerOutboxLease1764960000000 } from './migrations/1764960000000-ledger-outbox-lease.migration';

export function ledgerDataSourceOptions(url: string): DataSourceOptions {
  return serviceDataSourceOptions({ name: LEDGER, schema: LEDGER, url, entities: [], migrations: [LedgerInit1764680000000, LedgerJournal1764750000000, LedgerAccessTokens1764760000000, LedgerParkedEvents1764770000000, LedgerFinanceApi1764800000000, LedgerJournalDayScopes1764810000000, LedgerEventArchive1764820000000, LedgerOperationKeyIndex1764830000000, LedgerOutboxHeaders1764840000000, LedgerCallFilters1764920000000, LedgerParkedAnswer1764930000000, LedgerOutboxLease1764960000000, LedgerSettledIndex1765100000000] });
}
