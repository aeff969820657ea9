/** Typed tables (medium tier): settlement's declarations match its migrations. */
import { expectTablesAsMigrated } from '@tollgate/testing';
import { VERIFICATION } from '../src/lib/record-call-fact/verification.repository';
import { PAYOUT } from '../src/lib/issue-payout/payouts.repository';
import { inSchema, LEDGER_BALANCE, LEDGER_ENTRY, LEDGER_POSTING } from '@tollgate/persistence';
import { settlementDataSourceOptions } from '../src/lib/settlement.datasource-options';

jest.setTimeout(60_000);

describe('settlement\'s tables', () => expectTablesAsMigrated('settle', settlementDataSourceOptions, [VERIFICATION, PAYOUT, inSchema(LEDGER_BALANCE, 'settlement'), inSchema(LEDGER_POSTING, 'settlement'), inSchema(LEDGER_ENTRY, 'settlement')]));
