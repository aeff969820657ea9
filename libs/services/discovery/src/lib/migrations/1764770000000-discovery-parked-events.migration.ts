import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { createParkedEventTableV2, dropParkedEventTableV2 } from '@tollgate/messaging';

/** Events this service's consumers parked (dead letters), with the reason, for ops to re-drive. */
export class DiscoveryParkedEvents1764770000000 implements MigrationInterface {
  name = 'DiscoveryParkedEvents1764770000000';

  async up(q: QueryRunner): Promise<void> {
    await createParkedEventTableV2(q, 'discovery');
  }

  async down(q: QueryRunner): Promise<void> {
    await dropParkedEventTableV2(q, 'discovery');
  }
}
