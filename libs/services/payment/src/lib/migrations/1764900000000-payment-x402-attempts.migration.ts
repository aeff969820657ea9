import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * An x402 payment is its own durable record, outside any consumer transaction. The attempt is written
 * with the CallRequested it pays for; verify and settle run after that commit; each outcome is written when known.
 */
export class PaymentX402Attempts1764900000000 implements MigrationInterface {
  name = 'PaymentX402Attempts1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE payment.x402_attempt (
        intent_id      uuid PRIMARY KEY,
        state          text NOT NULL CHECK (state IN ('verifying', 'settling', 'settled', 'refused')),
        network        text NOT NULL,
        payer          text NOT NULL,
        nonce          text NOT NULL,
        amount_minor   bigint NOT NULL CHECK (amount_minor > 0),
        asset          text NOT NULL,
        facilitator    text NOT NULL,
        payment_id     text NOT NULL UNIQUE,
        payment        jsonb NOT NULL,
        requirements   jsonb NOT NULL,
        request        jsonb NOT NULL,
        causation_id   uuid NOT NULL,
        approved       boolean NOT NULL DEFAULT false,
        tries          integer NOT NULL DEFAULT 0,
        next_try_at    timestamptz NOT NULL DEFAULT now(),
        lease_until    timestamptz,
        unknown_since  timestamptz,
        last_problem   text,
        transaction    text,
        refusal        text,
        created_at     timestamptz NOT NULL DEFAULT now(),
        updated_at     timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX x402_attempt_open ON payment.x402_attempt (next_try_at) WHERE state IN ('verifying', 'settling')`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE payment.x402_attempt');
  }
}
