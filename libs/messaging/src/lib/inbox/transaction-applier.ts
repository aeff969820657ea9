import { type EntityManager } from 'typeorm';
import { type EventEnvelope } from '@tollgate/contracts';
import { bindToActiveContext, eventAgeSeconds, eventHandleSeconds, inConsumerSpan, withLogContext } from '@tollgate/observability';
import { type DeliveredMessage } from '../transport/event-transport';
import { select } from '@tollgate/persistence';
import { INBOX_EVENT } from '../outbox/messaging-tables';
import { type BatchApplier, type BatchEvent, type EventHandler, intentIdOf } from './handler';

/** A delivered message, decoded against its contract, with the handler it is for. */
export interface Decoded {
  message: DeliveredMessage;
  handler: EventHandler<object>;
  envelope: EventEnvelope;
  payload: object;
}

export interface TransactionApplierOptions {
  name: string;
  schema: string;
  applyBatch?: BatchApplier;
  dedupedByModel?: boolean;
}

/**
 * A consumer's events applied in a transaction it is given (its own, or — embedded mode — the producer's, under a
 * savepoint): the inbox record of the new ones (unless the model absorbs duplicates), then the handlers or the batch
 * applier, each in its event's trace, with the stage metrics.
 */
export class TransactionApplier {
  constructor(private readonly options: TransactionApplierOptions) {}

  async apply(manager: EntityManager, items: readonly Decoded[], after: Array<() => Promise<void> | void>): Promise<void> {
    const isNew = new Set(this.options.dedupedByModel ? items.map((i) => i.envelope.eventId) : await this.recordInInbox(manager, items));
    // The same event twice in one batch (a redelivered copy) runs once.
    const news = items.filter((item) => isNew.delete(item.envelope.eventId));
    if (this.options.applyBatch) await this.handleBatch(news, manager, after);
    else for (const item of news) await this.handleOne(item, manager, after);
  }

  /** Records the batch's events in the inbox; returns the ids not seen before (a redelivered one is already there). */
  private async recordInInbox(manager: EntityManager, items: readonly Decoded[]): Promise<string[]> {
    const { schema, name } = this.options;
    const fresh = await select(manager, INBOX_EVENT, ['event_id'],
      `INSERT INTO "${schema}".inbox_event (consumer, event_id, topic, partition, "offset")
       SELECT $1, * FROM unnest($2::uuid[], $3::text[], $4::int[], $5::text[]) ON CONFLICT DO NOTHING RETURNING event_id`,
      [name, items.map((i) => i.envelope.eventId), items.map((i) => i.message.topic), items.map((i) => i.message.partition), items.map((i) => i.message.offset)]);
    return fresh.map((r) => r.event_id);
  }

  /** One new event's handler, in the batch's transaction: its log context, its trace span, its stage metrics. */
  private async handleOne(item: Decoded, manager: EntityManager, after: Array<() => Promise<void> | void>): Promise<void> {
    const { name } = this.options;
    const intentId = (item.payload as { intentId?: unknown }).intentId;
    const call = typeof intentId === 'string' ? intentId : undefined;
    const labels = { consumer: name, type: item.envelope.type };
    eventAgeSeconds.observe(labels, Math.max(0, Date.now() - Date.parse(item.envelope.occurredAt)) / 1000);
    const started = performance.now();
    // Work a handler schedules after the commit (a dispatch, a read-back) continues the event's trace.
    await withLogContext(call ? { intentId: call } : {}, () => inConsumerSpan(name, item.message.topic, item.message.headers, call, () =>
      item.handler.handle({ payload: item.payload, envelope: item.envelope, manager, afterCommit: (fn) => after.push(bindToActiveContext(fn)) })));
    eventHandleSeconds.observe(labels, (performance.now() - started) / 1000);
  }

  /**
   * A batch applier's call over the batch's new events, with each event's stage metrics and its consumer span (so every
   * event's trace shows this consumer); the batch runs in the first event's span, and `within` gives each event's.
   */
  private async handleBatch(items: readonly Decoded[], manager: EntityManager, after: Array<() => Promise<void> | void>): Promise<void> {
    if (items.length === 0) return;
    const { name } = this.options;
    const started = performance.now();
    const events: BatchEvent[] = items.map((i) => ({ type: i.envelope.type, topic: i.message.topic, headers: i.message.headers ?? {}, payload: i.payload, envelope: i.envelope }));
    const within = <T>(e: BatchEvent, fn: () => Promise<T>) => inConsumerSpan(name, e.topic, e.headers, intentIdOf(e.payload), fn);
    for (const e of events.slice(1)) {
      eventAgeSeconds.observe({ consumer: name, type: e.type }, Math.max(0, Date.now() - Date.parse(e.envelope.occurredAt)) / 1000);
      await within(e, () => Promise.resolve());
    }
    eventAgeSeconds.observe({ consumer: name, type: events[0]!.type }, Math.max(0, Date.now() - Date.parse(events[0]!.envelope.occurredAt)) / 1000);
    await within(events[0]!, () => this.options.applyBatch!({ events, manager, afterCommit: (fn) => after.push(bindToActiveContext(fn)), within }));
    const each = (performance.now() - started) / 1000 / items.length;
    for (const item of items) eventHandleSeconds.observe({ consumer: name, type: item.envelope.type }, each);
  }
}
