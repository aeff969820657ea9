import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * What the receipt needs about money — the asset's decimals for
 * display values, the amount payment actually held (zero for a free call), and
 * the x402 settlement response when an x402 payment funded the call.
 */
export class GatewayReceipts1764750000000 implements MigrationInterface {
  name = 'GatewayReceipts1764750000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE gateway.call ADD COLUMN asset_decimals integer, ADD COLUMN held_minor bigint, ADD COLUMN x402_response jsonb');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE gateway.call DROP COLUMN asset_decimals, DROP COLUMN held_minor, DROP COLUMN x402_response');
  }
}
