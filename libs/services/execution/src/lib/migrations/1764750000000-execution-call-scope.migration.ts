import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * R1: a call runs under the scope it was authorised in — the trusted actor
 * (owner, agent) and the toolset (MCP URL) from the gateway's credential check,
 * carried on CallRequested. Rows recorded before this have none: such a call
 * is refused by the runtime before any I/O rather than sent unscoped.
 */
export class ExecutionCallScope1764750000000 implements MigrationInterface {
  name = 'ExecutionCallScope1764750000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE execution.pending_call ADD COLUMN owner_id text, ADD COLUMN agent_id text, ADD COLUMN mcp_url_id text');
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE execution.pending_call DROP COLUMN owner_id, DROP COLUMN agent_id, DROP COLUMN mcp_url_id');
  }
}
