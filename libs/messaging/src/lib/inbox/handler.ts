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
}
