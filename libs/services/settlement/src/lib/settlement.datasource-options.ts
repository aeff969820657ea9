import { serviceDataSourceOptions } from '@tollgate/persistence';
import { type DataSourceOptions } from 'typeorm';
import { SettlementInit1764680000000 } from './migrations/1764680000000-settlement-init.migration';
import { SettlementLedger1764750000000 } from './migrations/1764750000000-settlement-ledger.migration';
import { SettlementParkedEvents1764770000000 } from './migrations/1764770000000-settlement-parked-events.migration';
import { SETTLEMENT } from './settlement.constants';
import { SettlementTraceContext1764850000000 } from './migrations/1764850000000-settlement-trace-context.migration';
import { SettlementCallLife1764860000000 } from './migrations/1764860000000-settlement-call-life.migration';
import { SettlementOutboxHeaders1764840000000 } from './migrations/1764840000000-settlement-outbox-headers.migration';
import { SettlementParkedAnswer1764930000000 } from './migrations/1764930000000-settlement-parked-answer.migration';
import { SettlementLifeEnds1764940000000 } from './migrations/1764940000000-settlement-life-ends.migration';
import { SettlementOutboxLease1764960000000 } from './migrations/1764960000000-settlement-outbox-lease.migration';

export function settlementDataSourceOptions(url: string): DataSourceOptions {
  return serviceDataSourceOptions({ name: SETTLEMENT, schema: SETTLEMENT, url, entities: [], migrations: [SettlementInit1764680000000, SettlementLedger1764750000000, SettlementParkedEvents1764770000000, SettlementOutboxHeaders1764840000000, SettlementTraceContext1764850000000, SettlementCallLife1764860000000, SettlementParkedAnswer1764930000000, SettlementLifeEnds1764940000000, SettlementOutboxLease1764960000000] });
}
