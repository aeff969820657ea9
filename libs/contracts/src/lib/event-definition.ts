import { type ClassConstructor } from 'class-transformer';
import { type TopicName } from './topics';
import { validateAs } from './validation';

/**
 * One event type: its name, schema version, topic, payload class and how its
 * Kafka key is derived. Call-life events are keyed by `intentId`, so every
 * event of one call lands on one partition, in order.
 */
export interface EventDefinition<P extends object = object> {
  readonly type: string;
  readonly version: number;
  readonly topic: TopicName;
  readonly payload: ClassConstructor<P>;
  keyOf(payload: P): string;
}

export type PayloadOf<D> = D extends EventDefinition<infer P> ? P : never;

export function defineEvent<P extends object>(def: EventDefinition<P>): EventDefinition<P> {
  return Object.freeze(def);
}

export function validatePayload<P extends object>(def: EventDefinition<P>, plain: unknown): P {
  return validateAs(def.payload, plain, `${def.type} v${def.version} payload`);
}
