import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { createDoubleEntryTables, dropDoubleEntryTables } from '@tollgate/persistence';

/**
 * Settlement's share of the double-entry ledger (clearing → provider
 * payable + platform revenue; payable → external on payout), the fee split of
 * each settled call, and payouts per provider statement period.
 */
export class SettlementLedger1764750000000 implements MigrationInterface {
  name = 'SettlementLedger1764750000000';

  async up(q: QueryRunner): Promise<void> {
    await createDoubleEntryTables(q, 'settlement', ['settle', 'payout']);
    await q.query(`
      ALTER TABLE settlement.verification
        ADD COLUMN owner_id text,
        ADD COLUMN fee_minor bigint,
        ADD COLUMN net_minor bigint,
        ADD COLUMN payout_id uuid`);
    await q.query(`
      CREATE TABLE settlement.payout (
        payout_id    uuid PRIMARY KEY,
        provider_id  text NOT NULL,
        period_start timestamptz NOT NULL,
        period_end   timestamptz NOT NULL,
        asset        text NOT NULL,
        calls        int NOT NULL,
        gross_minor  bigint NOT NULL,
        fee_minor    bigint NOT NULL,
        net_minor    bigint NOT NULL CHECK (net_minor = gross_minor - fee_minor),
        created_at   timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX verification_provider_closed ON settlement.verification (provider_id, closed_at) WHERE state IN ('settled', 'refunded')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX settlement.verification_provider_closed');
    await q.query('DROP TABLE settlement.payout');
    await q.query('ALTER TABLE settlement.verification DROP COLUMN owner_id, DROP COLUMN fee_minor, DROP COLUMN net_minor, DROP COLUMN payout_id');
    await dropDoubleEntryTables(q, 'settlement');
  }
}
