import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { addOutboxHeadersV3, dropOutboxHeadersV3 } from '@tollgate/messaging';

/** Outbox rows keep their event's headers (the W3C trace context). */
export class SettlementOutboxHeaders1764840000000 implements MigrationInterface {
  name = 'SettlementOutboxHeaders1764840000000';

  async up(q: QueryRunner): Promise<void> {
    await addOutboxHeadersV3(q, 'settlement');
  }

  async down(q: QueryRunner): Promise<void> {
    await dropOutboxHeadersV3(q, 'settlement');
  }
}
