import { col, defineTable, type RowOf } from '@tollgate/persistence';

// The messaging kit's tables, which every service has in its own schema (`messagingTables` migration helper):
// declared once, with `(service)` for the schema; `inSchema` (persistence) names one service's copy.

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
