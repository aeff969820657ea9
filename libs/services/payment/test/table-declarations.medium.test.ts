/** Typed tables (medium tier): payment's declarations match its migrations. */
import { expectTablesAsMigrated } from '@tollgate/testing';
import { HOLD } from '../src/lib/holds/holds.repository';
import { paymentDataSourceOptions } from '../src/lib/payment.datasource-options';

jest.setTimeout(60_000);

describe('payment\'s tables', () => expectTablesAsMigrated('pay', paymentDataSourceOptions, [HOLD]));
