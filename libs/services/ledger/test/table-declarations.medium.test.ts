/** Typed tables (medium tier): the ledger's declarations match its migrations. */
import { expectTablesAsMigrated } from '@tollgate/testing';
import { EVENT_ARCHIVE } from '../src/lib/archive-events/event-archive.repository';
import { ACCESS_TOKEN } from '../src/lib/finance-access/access-tokens.repository';
import { TIMELINE_ENTRY } from '../src/lib/get-call-timeline/timeline-entries.repository';
import { JOURNAL_DAY, JOURNAL_ENTRY } from '../src/lib/projections/projection-writer';
import { ledgerDataSourceOptions } from '../src/lib/ledger.datasource-options';

jest.setTimeout(60_000);

describe('the ledger\'s tables', () => expectTablesAsMigrated('ledger', ledgerDataSourceOptions, [EVENT_ARCHIVE, ACCESS_TOKEN, TIMELINE_ENTRY, JOURNAL_ENTRY, JOURNAL_DAY]));
