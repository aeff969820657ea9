import { serviceDataSourceOptions } from '@tollgate/persistence';
import { type DataSourceOptions } from 'typeorm';
import { PaymentInit1764680000000 } from './migrations/1764680000000-payment-init.migration';
import { PaymentWallets1764750000000 } from './migrations/1764750000000-payment-wallets.migration';
import { PaymentParkedEvents1764770000000 } from './migrations/1764770000000-payment-parked-events.migration';
import { PaymentSpendCounters1764790000000 } from './migrations/1764790000000-payment-spend-counters.migration';
import { PAYMENT } from './payment.constants';
import { PaymentOutboxHeaders1764840000000 } from './migrations/1764840000000-payment-outbox-headers.migration';
import { PaymentX402Attempts1764900000000 } from './migrations/1764900000000-payment-x402-attempts.migration';
import { PaymentOpenHoldsIndex1764910000000 } from './migrations/1764910000000-payment-open-holds-index.migration';
import { PaymentHoldCaptured1764920000000 } from './migrations/1764920000000-payment-hold-captured.migration';
import { PaymentParkedAnswer1764930000000 } from './migrations/1764930000000-payment-parked-answer.migration';
import { PaymentHoldLife1764950000000 } from './migrations/1764950000000-payment-hold-life.migration';
import { PaymentOutboxLease1764960000000 } from './migrations/1764960000000-payment-outbox-lease.migration';
import { PaymentX402AttemptLife1764970000000 } from './migrations/1764970000000-payment-x402-attempt-life.migration';
import { PaymentMppReplay1765200000000 } from './migrations/1765200000000-payment-mpp-replay.migration';

export function paymentDataSourceOptions(url: string): DataSourceOptions {
  return serviceDataSourceOptions({ name: PAYMENT, schema: PAYMENT, url, entities: [], migrations: [PaymentInit1764680000000, PaymentWallets1764750000000, PaymentParkedEvents1764770000000, PaymentSpendCounters1764790000000, PaymentOutboxHeaders1764840000000, PaymentX402Attempts1764900000000, PaymentOpenHoldsIndex1764910000000, PaymentHoldCaptured1764920000000, PaymentParkedAnswer1764930000000,
    PaymentHoldLife1764950000000, PaymentOutboxLease1764960000000, PaymentX402AttemptLife1764970000000, PaymentMppReplay1765200000000] });
}
