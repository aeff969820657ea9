import { type MigrationInterface, type QueryRunner } from 'typeorm';

const DERIVED = ['provider_id', 'attempts', 'classification', 'result_attempt', 'effect', 'effect_attempt', 'error', 'held_minor', 'x402_response', 'settlement'];

/**
 * `gateway.call` kept ten columns derived from the call's state on every save, read by no query of the product (the
 * answer, receipt and repeat verdict come from `life`; retention erases the x402 response from `life`). They go;
 * `answered` stays, because its trigger wakes waiting requests in every replica.
 */
export class GatewayLeanCall1764940000000 implements MigrationInterface {
  name = 'GatewayLeanCall1764940000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE gateway.call ${DERIVED.map((c) => `DROP COLUMN ${c}`).join(', ')}`);
  }

  /** The columns come back empty (derived: the next save of each call fills them again only if the code does). */
  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE gateway.call ADD COLUMN provider_id text, ADD COLUMN attempts int NOT NULL DEFAULT 0, ADD COLUMN classification text,
      ADD COLUMN result_attempt int, ADD COLUMN effect text, ADD COLUMN effect_attempt int, ADD COLUMN error jsonb, ADD COLUMN held_minor bigint,
      ADD COLUMN x402_response jsonb, ADD COLUMN settlement text`);
  }
}
