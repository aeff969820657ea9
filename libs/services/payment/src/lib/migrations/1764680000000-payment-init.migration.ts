import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { createMessagingTablesV1, dropMessagingTablesV1 } from '@tollgate/messaging';

export class PaymentInit1764680000000 implements MigrationInterface {
  name = 'PaymentInit1764680000000';

  async up(q: QueryRunner): Promise<void> {
    await createMessagingTablesV1(q, 'payment');
    // A hold is a pending transfer: posted (captured) or voided exactly once.
    await q.query(`
      CREATE TABLE payment.hold (
        hold_id      uuid PRIMARY KEY,
        intent_id    uuid NOT NULL UNIQUE,
        owner_id     text NOT NULL,
        amount_minor bigint NOT NULL CHECK (amount_minor >= 0),
        asset        text NOT NULL,
        status       text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'posted', 'voided')),
        created_at   timestamptz NOT NULL DEFAULT now(),
        resolved_at  timestamptz
      )`);
    await q.query(`
      CREATE TABLE payment.rejection (
        intent_id  uuid PRIMARY KEY,
        code       text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE payment.rejection');
    await q.query('DROP TABLE payment.hold');
    await dropMessagingTablesV1(q, 'payment');
  }
}
