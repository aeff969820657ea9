import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * Access policies attached to an owner or to an MCP URL, versioned
 * (a new text is a new version; the highest is in force), and the versions in
 * force recorded on each call (C2: pinned at dispatch).
 */
export class GatewayAccessPolicy1764710000000 implements MigrationInterface {
  name = 'GatewayAccessPolicy1764710000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE gateway.access_policy (
        subject_kind text NOT NULL CHECK (subject_kind IN ('owner', 'url')),
        subject_id   uuid NOT NULL,
        version      integer NOT NULL CHECK (version >= 1),
        text         text NOT NULL,
        created_at   timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (subject_kind, subject_id, version)
      )`);
    await q.query('ALTER TABLE gateway.call ADD COLUMN access_policy jsonb');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE gateway.call DROP COLUMN access_policy');
    await q.query('DROP TABLE gateway.access_policy');
  }
}
