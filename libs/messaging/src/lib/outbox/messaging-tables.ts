import { type QueryRunner } from 'typeorm';

/**
 * The outbox and inbox tables every service keeps in its own schema. Called
 * from each service's first migration. This is version 1 of these tables:
 * never edit it; a change is a new function used by a new migration.
 */
export async function createMessagingTablesV1(q: QueryRunner, schema: string): Promise<void> {
  await q.query(`
    CREATE TABLE "${schema}".outbox_event (
      id           bigserial PRIMARY KEY,
      event_id     uuid        NOT NULL UNIQUE,
      topic        text        NOT NULL,
      key          text        NOT NULL,
      envelope     jsonb       NOT NULL,
      created_at   timestamptz NOT NULL DEFAULT now(),
      published_at timestamptz
    )`);
  await q.query(`CREATE INDEX outbox_event_unpublished ON "${schema}".outbox_event (id) WHERE published_at IS NULL`);
  await q.query(`
    CREATE TABLE "${schema}".inbox_event (
      consumer   text        NOT NULL,
      event_id   uuid        NOT NULL,
      topic      text        NOT NULL,
      partition  integer     NOT NULL,
      "offset"   text        NOT NULL,
      applied_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (consumer, event_id)
    )`);
}

export async function dropMessagingTablesV1(q: QueryRunner, schema: string): Promise<void> {
  await q.query(`DROP TABLE IF EXISTS "${schema}".inbox_event`);
  await q.query(`DROP TABLE IF EXISTS "${schema}".outbox_event`);
}

/** The NOTIFY channel outbox writers signal on commit; the payload is the schema. */
export const OUTBOX_CHANNEL = 'tollgate_outbox';
