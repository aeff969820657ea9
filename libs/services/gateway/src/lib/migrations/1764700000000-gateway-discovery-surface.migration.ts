import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * URL profiles (scope, discovery mode, pinned tools, provider rules),
 * the full catalog read model (one JSON document per tool, as published on
 * the catalog topic), and the shared rate-limit counters that hold across
 * gateway instances.
 */
export class GatewayDiscoverySurface1764700000000 implements MigrationInterface {
  name = 'GatewayDiscoverySurface1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE gateway.mcp_url
        ADD CONSTRAINT mcp_url_mode CHECK (discovery_mode IN ('full', 'search', 'auto')),
        ADD COLUMN auto_threshold   integer NOT NULL DEFAULT 20 CHECK (auto_threshold >= 0),
        ADD COLUMN pinned_tools     jsonb NOT NULL DEFAULT '[]',
        ADD COLUMN scope_tools      jsonb,
        ADD COLUMN scope_categories jsonb,
        ADD COLUMN provider_rules   jsonb`);
    // The read model is rebuilt from the compacted catalog topic (v2): it starts empty.
    await q.query('DROP TABLE gateway.catalog_tool');
    await q.query(`
      CREATE TABLE gateway.catalog_tool (
        tool_id    text PRIMARY KEY,
        name       text NOT NULL UNIQUE,
        status     text NOT NULL,
        version    integer NOT NULL,
        doc        jsonb NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query('CREATE INDEX call_agent_tool_day ON gateway.call (agent_id, tool_id, created_at)');
    // Counters of rate-limiter-flexible's PostgreSQL store (its own layout; created here, never by the library).
    await q.query(`
      CREATE TABLE gateway.rate_limit (
        key    varchar(255) PRIMARY KEY,
        points integer NOT NULL DEFAULT 0,
        expire bigint
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE gateway.rate_limit');
    await q.query('DROP INDEX gateway.call_agent_tool_day');
    await q.query('DROP TABLE gateway.catalog_tool');
    await q.query(`
      CREATE TABLE gateway.catalog_tool (
        tool_id text PRIMARY KEY, name text NOT NULL UNIQUE, version integer NOT NULL, status text NOT NULL, description text NOT NULL,
        input_schema jsonb NOT NULL, output_schema jsonb, annotations jsonb, price_minor bigint NOT NULL, asset text NOT NULL
      )`);
    await q.query(`
      ALTER TABLE gateway.mcp_url DROP CONSTRAINT mcp_url_mode, DROP COLUMN auto_threshold, DROP COLUMN pinned_tools,
        DROP COLUMN scope_tools, DROP COLUMN scope_categories, DROP COLUMN provider_rules`);
  }
}
