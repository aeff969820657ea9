/** Typed tables (medium tier): payment's declarations match its migrations. */
import { inSchema, LEDGER_BALANCE, LEDGER_ENTRY, LEDGER_POSTING } from '@tollgate/persistence';
import { expectTablesAsMigrated } from '@tollgate/testing';
import { APPROVAL } from '../src/lib/approve-call/approvals.repository';
import { DEPOSIT } from '../src/lib/fund-wallet/deposits.repository';
import { X402_ATTEMPT, X402_NONCE } from '../src/lib/attempts/x402-attempts.repository';
import { CHARGE, HOLD, SPEND_COUNTER } from '../src/lib/holds/holds.repository';
import { SPEND_POLICY } from '../src/lib/spend-policy/spend-policies.repository';
import { paymentDataSourceOptions } from '../src/lib/payment.datasource-options';

jest.setTimeout(60_000);

describe('payment\'s tables', () => expectTablesAsMigrated('pay', paymentDataSourceOptions, [HOLD, CHARGE, SPEND_COUNTER, SPEND_POLICY, APPROVAL, DEPOSIT, X402_ATTEMPT, X402_NONCE, inSchema(LEDGER_BALANCE, 'payment'), inSchema(LEDGER_POSTING, 'payment'), inSchema(LEDGER_ENTRY, 'payment')]));
