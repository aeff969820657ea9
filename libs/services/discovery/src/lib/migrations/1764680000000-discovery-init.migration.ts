import { type MigrationInterface, type QueryRunner } from 'typeorm';
import { createMessagingTablesV1, dropMessagingTablesV1 } from '@tollgate/messaging';

export class DiscoveryInit1764680000000 implements MigrationInterface {
  name = 'DiscoveryInit1764680000000';

  async up(q: QueryRunner): Promise<void> {
    await createMessagingTablesV1(q, 'discovery');
    await q.query(`
      CREATE TABLE discovery.provider (
        provider_id    text PRIMARY KEY,
        endpoint       text NOT NULL,
        created_at     timestamptz NOT NULL DEFAULT now(),
        last_synced_at timestamptz
      )`);
    await q.query(`
      CREATE TABLE discovery.catalog_tool (
        tool_id       text PRIMARY KEY,
        name          text NOT NULL UNIQUE,
        version       integer NOT NULL,
        contract_hash text NOT NULL,
        description   text NOT NULL,
        input_schema  jsonb NOT NULL,
        output_schema jsonb,
        annotations   jsonb,
        price_minor   bigint NOT NULL DEFAULT 0 CHECK (price_minor >= 0),
        asset         text NOT NULL DEFAULT 'USDC',
        status        text NOT NULL DEFAULT 'active',
        bindings      jsonb NOT NULL,
        updated_at    timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE discovery.catalog_tool');
    await q.query('DROP TABLE discovery.provider');
    await dropMessagingTablesV1(q, 'discovery');
  }
}
