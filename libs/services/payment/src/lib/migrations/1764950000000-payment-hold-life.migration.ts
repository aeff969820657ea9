import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * A hold's `pending/captured/voided` was a state machine beside the call-life model. The hold now keeps the call's
 * state as payment knows it (held, then settled or refunded); whether it is open is the model's `isTerminal`, kept as
 * `open` only for the count of open holds. Existing holds get the state their status stood for (a one-time backfill).
 */
export class PaymentHoldLife1764950000000 implements MigrationInterface {
  name = 'PaymentHoldLife1764950000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE payment.hold ADD COLUMN life jsonb, ADD COLUMN open boolean');
    await q.query(`
      UPDATE payment.hold SET open = (status = 'pending'), life = jsonb_build_object(
          'intentId', intent_id::text, 'attempts', '{}'::jsonb,
          'held', jsonb_build_object('holdId', hold_id::text, 'ownerId', owner_id, 'amount', jsonb_build_object('amountMinor', amount_minor::text, 'asset', asset), 'free', false))
        || CASE status
             WHEN 'captured' THEN jsonb_build_object('settled', jsonb_build_object('holdId', hold_id::text, 'providerId', '',
               'amount', jsonb_build_object('amountMinor', COALESCE(captured_minor, amount_minor)::text, 'asset', asset)))
             WHEN 'voided' THEN jsonb_build_object('refunded', jsonb_build_object('holdId', hold_id::text,
               'amount', jsonb_build_object('amountMinor', amount_minor::text, 'asset', asset), 'reason', 'before the hold kept its state'))
             ELSE '{}'::jsonb END`);
    await q.query('ALTER TABLE payment.hold ALTER COLUMN life SET NOT NULL, ALTER COLUMN open SET NOT NULL');
    await q.query('DROP INDEX payment.hold_open');
    await q.query('CREATE INDEX hold_open ON payment.hold (hold_id) WHERE open');
    await q.query('ALTER TABLE payment.hold DROP COLUMN status');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE payment.hold ADD COLUMN status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'captured', 'voided'))`);
    await q.query(`UPDATE payment.hold SET status = CASE WHEN open THEN 'pending' WHEN life ? 'settled' THEN 'captured' ELSE 'voided' END`);
    await q.query('DROP INDEX payment.hold_open');
    await q.query(`CREATE INDEX hold_open ON payment.hold (hold_id) WHERE status = 'pending'`);
    await q.query('ALTER TABLE payment.hold DROP COLUMN life, DROP COLUMN open');
  }
}
