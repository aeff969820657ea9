import { type MigrationInterface, type QueryRunner } from 'typeorm';

/** The W3C context of the confirmed effect, so the sweeper's CallSettled continues the call's trace. */
export class SettlementTraceContext1764850000000 implements MigrationInterface {
  name = 'SettlementTraceContext1764850000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE settlement.verification ADD COLUMN trace_headers jsonb');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE settlement.verification DROP COLUMN trace_headers');
  }
}
