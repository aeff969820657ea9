import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * MPP's replay store (mppx's `Store.AtomicStore`, which mppx ships only in memory, Redis and Cloudflare KV): kept in
 * PostgreSQL with the rest of the books, so a credential claimed in a call's transaction is claimed on every replica.
 */
export class PaymentMppReplay1765200000000 implements MigrationInterface {
  name = 'PaymentMppReplay1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE payment.mpp_replay (
        key         text PRIMARY KEY CHECK (length(key) <= 300),
        value       jsonb NOT NULL,
        expires_at  timestamptz,
        created_at  timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query('CREATE INDEX mpp_replay_expires ON payment.mpp_replay (expires_at) WHERE expires_at IS NOT NULL');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE payment.mpp_replay');
  }
}
