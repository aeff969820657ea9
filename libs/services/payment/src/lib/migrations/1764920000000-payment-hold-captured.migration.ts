import { type MigrationInterface, type QueryRunner } from 'typeorm';

/** One word per fact (the call-life glossary): a hold whose call was settled is `captured` — it was called `posted`. */
export class PaymentHoldCaptured1764920000000 implements MigrationInterface {
  name = 'PaymentHoldCaptured1764920000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE payment.hold DROP CONSTRAINT hold_status_check');
    await q.query(`UPDATE payment.hold SET status = 'captured' WHERE status = 'posted'`);
    await q.query(`ALTER TABLE payment.hold ADD CONSTRAINT hold_status_check CHECK (status IN ('pending', 'captured', 'voided'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE payment.hold DROP CONSTRAINT hold_status_check');
    await q.query(`UPDATE payment.hold SET status = 'posted' WHERE status = 'captured'`);
    await q.query(`ALTER TABLE payment.hold ADD CONSTRAINT hold_status_check CHECK (status IN ('pending', 'posted', 'voided'))`);
  }
}
