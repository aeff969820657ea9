import { type EntityManager } from 'typeorm';
import { type EventDefinition, type EventEnvelope } from '@tollgate/contracts';

/** What a consumer may do when one of its events is parked: give the final answer whoever waits on it needs. */
export interface ParkedContext<P> {
  /** The decoded payload; undefined when the message broke its contract (then only what `intentId` names is known). */
  payload: P | undefined;
  /** The call the event is about: from the payload, or read leniently from a message that broke its contract. */
  intentId: string | undefined;
  /** The parked event's id, when it could be read (the answer's causation). */
  eventId: string | undefined;
  manager: EntityManager;
}

export interface HandleContext<P> {
  payload: P;
  envelope: EventEnvelope;
  /** The transaction that also records the event in the inbox: write the effect through it. */
  manager: EntityManager;
  /**
   * Runs `fn` once the transaction has committed (e.g. I/O to a provider, waking a waiting request).
   * It is not retried: anything that must survive a crash is recorded in the transaction first.
   */
  afterCommit(fn: () => Promise<void> | void): void;
}

export interface EventHandler<P extends object = object> {
  event: EventDefinition<P>;
  handle(ctx: HandleContext<P>): Promise<void>;
  /**
   * The event could not be applied and is parked: give the final answer whoever waits on it needs (payment refuses a
   * parked CallRequested, so the agent is not left waiting for a hold that never comes). It runs after the park
   * committed, in its own transaction, also for a message that broke its contract (then `payload` is undefined).
   */
  onParked?(ctx: ParkedContext<P>): Promise<void>;
  /**
   * The park's answer is provisional (e.g. "held for review"): a re-drive still applies the event after it. Without
   * this, the answer stands and a re-drive only gives it if it never was (payment's refusal is final).
   */
  redriveAfterAnswer?: boolean;
}

/** The call an event is about, when its payload names one. */
export function intentIdOf(payload: object): string | undefined {
  const id = (payload as { intentId?: unknown }).intentId;
  return typeof id === 'string' ? id : undefined;
}

/** One new event of a batch, as a batch applier sees it. */
export interface BatchEvent {
  type: string;
  topic: string;
  /** The message's headers (the W3C trace context of whoever wrote the event). */
  headers: Record<string, string>;
  payload: object;
  envelope: EventEnvelope;
}

/** A consumer that applies its batch at once: load the state of every entity the batch names, decide, save. */
export interface BatchContext {
  /** The batch's new events, in delivery order (redelivered ones already dropped by the inbox, unless `dedupedByModel`). */
  events: BatchEvent[];
  manager: EntityManager;
  /** Runs `fn` once the transaction has committed, in the context active when it was scheduled (see `within`). */
  afterCommit(fn: () => Promise<void> | void): void;
  /**
   * Runs work done for one event (what it emits, what it schedules after commit) inside that event's trace: a batch
   * holds several calls, each with its own trace.
   */
  within<T>(event: BatchEvent, fn: () => Promise<T>): Promise<T>;
}

export type BatchApplier = (ctx: BatchContext) => Promise<void>;

/**
 * A consumer of these events that applies each batch in one call (`applyBatch`) instead of one handler per event:
 * `{ name, ...perBatch([CallDispatched, ResultReceived], (ctx) => ...) }`.
 */
export function perBatch(
  events: readonly EventDefinition<object>[], applyBatch: BatchApplier,
  options: { dedupedByModel?: boolean; onParked?: (event: EventDefinition<object>, ctx: ParkedContext<object>) => Promise<void>; redriveAfterAnswer?: boolean } = {},
): { handlers: EventHandler<object>[]; applyBatch: BatchApplier; dedupedByModel?: boolean } {
  const { onParked } = options;
  const handlers = events.map((event): EventHandler<object> => ({
    event,
    // One event alone (a re-drive of a parked one): a batch of one, outside any trace (its headers are not kept).
    handle: ({ payload, envelope, manager, afterCommit }) => applyBatch({
      events: [{ type: envelope.type, topic: event.topic, headers: {}, payload, envelope }], manager, afterCommit, within: (_e, fn) => fn(),
    }),
    ...(onParked ? { onParked: (ctx: ParkedContext<object>) => onParked(event, ctx) } : {}),
    ...(options.redriveAfterAnswer ? { redriveAfterAnswer: true } : {}),
  }));
  return { handlers, applyBatch, ...(options.dedupedByModel ? { dedupedByModel: true } : {}) };
}

/** A typed handler for one event: `on(PaymentHeld, async ({ payload, manager }) => ...)`. */
export function on<P extends object>(event: EventDefinition<P>, handle: (ctx: HandleContext<P>) => Promise<void>, extra: { onParked?: (ctx: ParkedContext<P>) => Promise<void> } = {}): EventHandler<P> {
  return { event, handle, ...extra };
}
