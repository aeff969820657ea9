import { type MigrationInterface, type QueryRunner } from 'typeorm';

/** A version's `execution` (task support) is part of its contract: how the tool may be run (R2, R3). */
export class DiscoveryTaskSupport1765000000000 implements MigrationInterface {
  name = 'DiscoveryTaskSupport1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE discovery.tool_version ADD COLUMN execution jsonb');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE discovery.tool_version DROP COLUMN execution');
  }
}
