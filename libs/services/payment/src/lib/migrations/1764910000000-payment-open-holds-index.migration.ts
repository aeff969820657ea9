import { type MigrationInterface, type QueryRunner } from 'typeorm';

/** The public readiness figure `payment.holdsOpen` counts open holds from an index, not a table scan. */
export class PaymentOpenHoldsIndex1764910000000 implements MigrationInterface {
  name = 'PaymentOpenHoldsIndex1764910000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX hold_open ON payment.hold (hold_id) WHERE status = 'pending'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX payment.hold_open');
  }
}
