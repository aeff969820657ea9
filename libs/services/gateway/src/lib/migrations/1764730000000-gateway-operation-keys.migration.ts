import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * B5: operation keys scoped to the agent. The primary key makes the
 * database decide which of concurrent requests with one key runs the call;
 * the others read what it recorded.
 */
export class GatewayOperationKeys1764730000000 implements MigrationInterface {
  name = 'GatewayOperationKeys1764730000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE gateway.operation_key (
        agent_id     uuid NOT NULL,
        key          text NOT NULL,
        tool_id      text NOT NULL,
        request_hash text NOT NULL,
        intent_id    uuid NOT NULL UNIQUE,
        created_at   timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (agent_id, key)
      )`);
    await q.query('ALTER TABLE gateway.call ADD COLUMN operation_key text, ADD COLUMN deadline_at timestamptz');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE gateway.call DROP COLUMN operation_key, DROP COLUMN deadline_at');
    await q.query('DROP TABLE gateway.operation_key');
  }
}
