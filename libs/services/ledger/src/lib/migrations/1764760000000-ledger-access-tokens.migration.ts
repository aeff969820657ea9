import { type MigrationInterface, type QueryRunner } from 'typeorm';

/** Finance and operator tokens for the finance API (only a hash of each secret is kept). */
export class LedgerAccessTokens1764760000000 implements MigrationInterface {
  name = 'LedgerAccessTokens1764760000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE ledger.access_token (
        token_id    uuid PRIMARY KEY,
        secret_hash text NOT NULL UNIQUE,
        role        text NOT NULL CHECK (role IN ('finance', 'operator')),
        owner_id    text,
        label       text NOT NULL,
        created_at  timestamptz NOT NULL DEFAULT now(),
        revoked_at  timestamptz,
        CHECK (role = 'finance' OR owner_id IS NULL)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE ledger.access_token');
  }
}
