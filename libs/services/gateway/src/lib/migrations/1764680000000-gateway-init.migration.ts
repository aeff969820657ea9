import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { createMessagingTablesV1, dropMessagingTablesV1 } from '@tollgate/messaging';

export class GatewayInit1764680000000 implements MigrationInterface {
  name = 'GatewayInit1764680000000';

  async up(q: QueryRunner): Promise<void> {
    await createMessagingTablesV1(q, 'gateway');
    await q.query(`CREATE TABLE gateway.owner (owner_id uuid PRIMARY KEY, name text NOT NULL, created_at timestamptz NOT NULL DEFAULT now())`);
    await q.query(`
      CREATE TABLE gateway.agent (
        agent_id   uuid PRIMARY KEY,
        owner_id   uuid NOT NULL REFERENCES gateway.owner (owner_id),
        name       text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    // Credentials are random 256-bit secrets shown once; only their sha256 is kept.
    await q.query(`
      CREATE TABLE gateway.credential (
        credential_id uuid PRIMARY KEY,
        agent_id      uuid NOT NULL REFERENCES gateway.agent (agent_id),
        secret_hash   text NOT NULL UNIQUE,
        created_at    timestamptz NOT NULL DEFAULT now(),
        revoked_at    timestamptz
      )`);
    await q.query(`
      CREATE TABLE gateway.mcp_url (
        mcp_url_id     uuid PRIMARY KEY,
        slug           text NOT NULL UNIQUE,
        owner_id       uuid REFERENCES gateway.owner (owner_id),
        discovery_mode text NOT NULL DEFAULT 'full',
        created_at     timestamptz NOT NULL DEFAULT now(),
        disabled_at    timestamptz
      )`);
    // Read model of the catalog, built from the compacted catalog topic; never read from discovery's tables.
    await q.query(`
      CREATE TABLE gateway.catalog_tool (
        tool_id       text PRIMARY KEY,
        name          text NOT NULL UNIQUE,
        version       integer NOT NULL,
        status        text NOT NULL,
        description   text NOT NULL,
        input_schema  jsonb NOT NULL,
        output_schema jsonb,
        annotations   jsonb,
        price_minor   bigint NOT NULL,
        asset         text NOT NULL
      )`);
    await q.query(`
      CREATE TABLE gateway.call (
        intent_id      uuid PRIMARY KEY,
        agent_id       uuid NOT NULL,
        mcp_url_id     uuid NOT NULL,
        tool_id        text NOT NULL,
        price_minor    bigint NOT NULL,
        asset          text NOT NULL,
        provider_id    text,
        attempts       integer NOT NULL DEFAULT 0,
        classification text,
        result         jsonb,
        effect         text,
        error          jsonb,
        settlement     text,
        created_at     timestamptz NOT NULL DEFAULT now(),
        updated_at     timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['call', 'catalog_tool', 'mcp_url', 'credential', 'agent', 'owner']) await q.query(`DROP TABLE gateway.${t}`);
    await dropMessagingTablesV1(q, 'gateway');
  }
}
