import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * With fallback between bindings a call has several attempts, and their events
 * arrive on different topics: the answer is complete only when the confirmed
 * effect and the stored result belong to the same attempt.
 */
export class GatewayCallAttempts1764740000000 implements MigrationInterface {
  name = 'GatewayCallAttempts1764740000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE gateway.call ADD COLUMN result_attempt integer, ADD COLUMN effect_attempt integer');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE gateway.call DROP COLUMN result_attempt, DROP COLUMN effect_attempt');
  }
}
