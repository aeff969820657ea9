import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * And 7. A device sign-in no longer keeps the credential it mints: the device's poll mints it and
 * hands it over once (only its hash exists, in `credential`). Retention: a call's replayable answer is erased after
 * 7 days (`answer_expired_at`; the key is kept, so a repeat answers IDEMPOTENCY_RESULT_UNAVAILABLE instead of buying
 * again), and the indexes the retention job walks.
 */
export class GatewayRetention1764790000000 implements MigrationInterface {
  name = 'GatewayRetention1764790000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE gateway.device_sign_in DROP COLUMN pending_credential');
    await q.query('CREATE INDEX device_sign_in_expiry ON gateway.device_sign_in (expires_at)');
    await q.query('ALTER TABLE gateway.call ADD COLUMN answer_expired_at timestamptz');
    await q.query('CREATE INDEX call_answer_retained ON gateway.call (created_at) WHERE answer_expired_at IS NULL');
    await q.query('CREATE INDEX rate_limit_expiry ON gateway.rate_limit (expire)');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX gateway.rate_limit_expiry');
    await q.query('DROP INDEX gateway.call_answer_retained');
    await q.query('ALTER TABLE gateway.call DROP COLUMN answer_expired_at');
    await q.query('DROP INDEX gateway.device_sign_in_expiry');
    await q.query('ALTER TABLE gateway.device_sign_in ADD COLUMN pending_credential text');
  }
}
