import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Each catalog tool's sentence embedding (384 float32, little-endian), keyed by the hash of the model and
 * the text embedded — so a restart or another gateway replica re-embeds nothing, and a changed contract is re-embedded.
 */
export class GatewayToolEmbeddings1764800000000 implements MigrationInterface {
  name = 'GatewayToolEmbeddings1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE gateway.tool_embedding (
        tool_id     text PRIMARY KEY,
        text_hash   text NOT NULL,
        vector      bytea NOT NULL CHECK (octet_length(vector) = 1536),
        embedded_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE gateway.tool_embedding');
  }
}
