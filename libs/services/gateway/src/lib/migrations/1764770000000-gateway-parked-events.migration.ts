import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { createParkedEventTableV2, dropParkedEventTableV2 } from '@tollgate/messaging';

/** Events this service's consumers parked (dead letters), with the reason, for ops to re-drive. */
export class GatewayParkedEvents1764770000000 implements MigrationInterface {
  name = 'GatewayParkedEvents1764770000000';

  async up(q: QueryRunner): Promise<void> {
    await createParkedEventTableV2(q, 'gateway');
  }

  async down(q: QueryRunner): Promise<void> {
    await dropParkedEventTableV2(q, 'gateway');
  }
}
