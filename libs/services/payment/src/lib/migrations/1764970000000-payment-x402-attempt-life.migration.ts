import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * An x402 attempt's `state` (with its transaction, refusal, unknown_since and last_problem) was a state machine set by
 * SQL guards. The attempt now keeps its life as the model folds it (`X402AttemptLife`); `open` is derived from it on
 * save, for the claim of due attempts (a partial index). Existing attempts get the life their columns stood for.
 */
export class PaymentX402AttemptLife1764970000000 implements MigrationInterface {
  name = 'PaymentX402AttemptLife1764970000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE payment.x402_attempt ADD COLUMN life jsonb, ADD COLUMN open boolean');
    await q.query(`
      UPDATE payment.x402_attempt SET open = state IN ('verifying', 'settling'), life = jsonb_strip_nulls(jsonb_build_object(
        'step', state, 'payer', payer, 'unknownSince', to_jsonb(unknown_since), 'problem', last_problem, 'transaction', transaction, 'refusal', refusal))`);
    await q.query('ALTER TABLE payment.x402_attempt ALTER COLUMN life SET NOT NULL, ALTER COLUMN open SET NOT NULL');
    await q.query('DROP INDEX payment.x402_attempt_open');
    await q.query('CREATE INDEX x402_attempt_open ON payment.x402_attempt (next_try_at) WHERE open');
    await q.query('ALTER TABLE payment.x402_attempt DROP COLUMN state, DROP COLUMN unknown_since, DROP COLUMN last_problem, DROP COLUMN transaction, DROP COLUMN refusal');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE payment.x402_attempt ADD COLUMN state text, ADD COLUMN unknown_since timestamptz, ADD COLUMN last_problem text,
                   ADD COLUMN transaction text, ADD COLUMN refusal text`);
    await q.query(`UPDATE payment.x402_attempt SET state = life->>'step', unknown_since = (life->>'unknownSince')::timestamptz,
                   last_problem = life->>'problem', transaction = life->>'transaction', refusal = life->>'refusal'`);
    await q.query(`ALTER TABLE payment.x402_attempt ALTER COLUMN state SET NOT NULL,
                   ADD CONSTRAINT x402_attempt_state_check CHECK (state IN ('verifying', 'settling', 'settled', 'refused'))`);
    await q.query('DROP INDEX payment.x402_attempt_open');
    await q.query(`CREATE INDEX x402_attempt_open ON payment.x402_attempt (next_try_at) WHERE state IN ('verifying', 'settling')`);
    await q.query('ALTER TABLE payment.x402_attempt DROP COLUMN life, DROP COLUMN open');
  }
}
