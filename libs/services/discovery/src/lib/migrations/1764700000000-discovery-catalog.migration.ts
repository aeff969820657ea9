import { type MigrationInterface, type QueryRunner } from 'typeorm';

/**
 * The catalog model: providers reached over Streamable HTTP or
 * stdio, catalog tools with versioned contracts (approved / pending /
 * retired), and one binding per provider serving a tool. The first
 * catalog_tool table held one row per upstream tool and is rebuilt from the
 * providers at their next sync.
 */
export class DiscoveryCatalog1764700000000 implements MigrationInterface {
  name = 'DiscoveryCatalog1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE discovery.provider
        ALTER COLUMN endpoint DROP NOT NULL,
        ADD COLUMN transport text NOT NULL DEFAULT 'http' CHECK (transport IN ('http', 'stdio')),
        ADD COLUMN command text,
        ADD COLUMN args jsonb,
        ADD COLUMN defaults jsonb NOT NULL DEFAULT '{}',
        ADD COLUMN health text NOT NULL DEFAULT 'healthy' CHECK (health IN ('healthy', 'unhealthy')),
        ADD COLUMN last_sync_report jsonb,
        ADD COLUMN last_sync_error text`);
    await q.query('DROP TABLE discovery.catalog_tool');
    await q.query(`
      CREATE TABLE discovery.catalog_tool (
        tool_id          text PRIMARY KEY,
        name             text NOT NULL UNIQUE,
        status           text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'removed')),
        current_version  integer NOT NULL,
        overrides        jsonb NOT NULL DEFAULT '{}',
        reviewed_at      timestamptz,
        published_digest text,
        created_at       timestamptz NOT NULL DEFAULT now(),
        updated_at       timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE discovery.tool_version (
        tool_id       text NOT NULL REFERENCES discovery.catalog_tool (tool_id),
        version       integer NOT NULL CHECK (version >= 1),
        contract_hash text NOT NULL,
        title         text,
        description   text NOT NULL,
        input_schema  jsonb NOT NULL,
        output_schema jsonb,
        annotations   jsonb,
        listing       jsonb NOT NULL DEFAULT '{}',
        provider_meta jsonb,
        state         text NOT NULL CHECK (state IN ('approved', 'pending', 'retired')),
        note          text NOT NULL,
        created_at    timestamptz NOT NULL DEFAULT now(),
        decided_at    timestamptz,
        PRIMARY KEY (tool_id, version),
        UNIQUE (tool_id, contract_hash)
      )`);
    // At most one version of a tool is in force.
    await q.query(`CREATE UNIQUE INDEX tool_version_one_approved ON discovery.tool_version (tool_id) WHERE state = 'approved'`);
    await q.query(`
      CREATE TABLE discovery.tool_binding (
        tool_id            text NOT NULL REFERENCES discovery.catalog_tool (tool_id),
        provider_id        text NOT NULL REFERENCES discovery.provider (provider_id),
        upstream_tool_name text NOT NULL,
        contract_hash      text NOT NULL,
        removed_at         timestamptz,
        updated_at         timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tool_id, provider_id)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE discovery.tool_binding');
    await q.query('DROP TABLE discovery.tool_version');
    await q.query('DROP TABLE discovery.catalog_tool');
    await q.query(`
      CREATE TABLE discovery.catalog_tool (
        tool_id text PRIMARY KEY, name text NOT NULL UNIQUE, version integer NOT NULL, contract_hash text NOT NULL,
        description text NOT NULL, input_schema jsonb NOT NULL, output_schema jsonb, annotations jsonb,
        price_minor bigint NOT NULL DEFAULT 0 CHECK (price_minor >= 0), asset text NOT NULL DEFAULT 'USDC',
        status text NOT NULL DEFAULT 'active', bindings jsonb NOT NULL, updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`DELETE FROM discovery.provider WHERE transport <> 'http'`);
    await q.query(`
      ALTER TABLE discovery.provider
        DROP COLUMN transport, DROP COLUMN command, DROP COLUMN args, DROP COLUMN defaults, DROP COLUMN health,
        DROP COLUMN last_sync_report, DROP COLUMN last_sync_error,
        ALTER COLUMN endpoint SET NOT NULL`);
  }
}
