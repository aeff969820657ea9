import { type QueryRunner } from 'typeorm';
import { col, defineTable, type RowOf } from '@tollgate/persistence';

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

/**
 * Version 2: events a consumer parked — a contract violation, or a handler that kept failing — with the
 * reason, so the consumer goes on; ops list them and request a re-drive after a fix (`redrive_requested_at`).
 */
export async function createParkedEventTableV2(q: QueryRunner, schema: string): Promise<void> {
  await q.query(`
    CREATE TABLE "${schema}".parked_event (
      consumer             text        NOT NULL,
      topic                text        NOT NULL,
      partition            integer     NOT NULL,
      "offset"             text        NOT NULL,
      event_id             uuid,
      key                  text        NOT NULL,
      value                text        NOT NULL,
      reason               text        NOT NULL,
      parked_at            timestamptz NOT NULL DEFAULT now(),
      redrive_requested_at timestamptz,
      resolved_at          timestamptz,
      PRIMARY KEY (consumer, topic, partition, "offset")
    )`);
  await q.query(`CREATE INDEX parked_event_open ON "${schema}".parked_event (consumer) WHERE resolved_at IS NULL`);
}

export async function dropParkedEventTableV2(q: QueryRunner, schema: string): Promise<void> {
  await q.query(`DROP TABLE IF EXISTS "${schema}".parked_event`);
}

/** The NOTIFY channel outbox writers signal on commit; the payload is the schema. */
export const OUTBOX_CHANNEL = 'tollgate_outbox';

/**
 * Version 3: an outbox row keeps the headers its event is published with — the W3C trace context
 * of the span that wrote it — so a trace continues across the relay and the broker.
 */
export async function addOutboxHeadersV3(q: QueryRunner, schema: string): Promise<void> {
  await q.query(`ALTER TABLE "${schema}".outbox_event ADD COLUMN headers jsonb`);
}

export async function dropOutboxHeadersV3(q: QueryRunner, schema: string): Promise<void> {
  await q.query(`ALTER TABLE "${schema}".outbox_event DROP COLUMN headers`);
}

/**
 * Version 4: the final answer a park owes whoever waits on the event (an agent waiting on its call) is applied after
 * the park committed, in its own transaction — so a fault the park is about cannot roll the park back. `answer_due`:
 * the consumer has one to give; `answered_at`: it was given; `answer_error`: it kept failing and waits for ops.
 */
export async function addParkedAnswerV4(q: QueryRunner, schema: string): Promise<void> {
  await q.query(`ALTER TABLE "${schema}".parked_event ADD COLUMN answer_due boolean NOT NULL DEFAULT false,
                   ADD COLUMN answered_at timestamptz, ADD COLUMN answer_error text`);
  await q.query(`CREATE INDEX parked_event_answer_due ON "${schema}".parked_event (consumer) WHERE answer_due AND answered_at IS NULL`);
}

export async function dropParkedAnswerV4(q: QueryRunner, schema: string): Promise<void> {
  await q.query(`ALTER TABLE "${schema}".parked_event DROP COLUMN answer_due, DROP COLUMN answered_at, DROP COLUMN answer_error`);
}

/**
 * Version 5: a row its writer publishes itself right after the commit is leased to it (`leased_until`): the relay
 * leaves it alone until the lease runs out — then it is the relay's, so a writer that died before publishing loses
 * nothing.
 */
export async function addOutboxLeaseV5(q: QueryRunner, schema: string): Promise<void> {
  await q.query(`ALTER TABLE "${schema}".outbox_event ADD COLUMN leased_until timestamptz`);
}

export async function dropOutboxLeaseV5(q: QueryRunner, schema: string): Promise<void> {
  await q.query(`ALTER TABLE "${schema}".outbox_event DROP COLUMN leased_until`);
}

// The tables as the repositories read them: declared once, with `(service)` for the schema (`inSchema` names one
// service's copy for its medium test against the migrations).

/** `<service>.outbox_event`: events appended with the state change that caused them, until the relay published them. */
export const OUTBOX_EVENT = defineTable('(service).outbox_event', {
  id: col.bigint().required(),
  event_id: col.uuid().required(),
  topic: col.text().required(),
  key: col.text().required(),
  envelope: col.jsonb<object>().required(),
  created_at: col.timestamptz().required(),
  published_at: col.timestamptz().nullable(),
  headers: col.jsonb<Record<string, string>>().nullable(),
  leased_until: col.timestamptz().nullable(),
});
export type OutboxEventRow = RowOf<typeof OUTBOX_EVENT>;

/** `<service>.inbox_event`: each consumer's applied events (a redelivery finds its row and changes nothing). */
export const INBOX_EVENT = defineTable('(service).inbox_event', {
  consumer: col.text().required(),
  event_id: col.uuid().required(),
  topic: col.text().required(),
  partition: col.integer().required(),
  offset: col.text().required(),
  applied_at: col.timestamptz().required(),
});

/** `<service>.parked_event`: messages a consumer could not apply, kept whole until re-driven (and answered, where due). */
export const PARKED_EVENT = defineTable('(service).parked_event', {
  consumer: col.text().required(),
  topic: col.text().required(),
  partition: col.integer().required(),
  offset: col.text().required(),
  event_id: col.uuid().nullable(),
  key: col.text().required(),
  value: col.text().required(),
  reason: col.text().required(),
  parked_at: col.timestamptz().required(),
  redrive_requested_at: col.timestamptz().nullable(),
  resolved_at: col.timestamptz().nullable(),
  answer_due: col.boolean().required(),
  answered_at: col.timestamptz().nullable(),
  answer_error: col.text().nullable(),
});
export type ParkedEventRow = RowOf<typeof PARKED_EVENT>;
