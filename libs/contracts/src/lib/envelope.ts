import { randomUUID } from 'node:crypto';
import { IsInt, IsISO8601, IsObject, IsOptional, IsString, IsUUID, Min, MinLength } from 'class-validator';
import { type EventDefinition, validatePayload } from './event-definition';
import { ContractViolationError, validateAs } from './validation';

/** The JSON written to Kafka (and to each outbox row) for every event. */
export class EventEnvelope {
  @IsUUID() eventId!: string;
  @IsString() @MinLength(1) type!: string;
  @IsInt() @Min(1) version!: number;
  /** The partition key: the call's `intentId` for call-life events. */
  @IsString() @MinLength(1) key!: string;
  @IsISO8601({ strict: true }) occurredAt!: string;
  /** The service that produced the event (e.g. `execution`). */
  @IsString() @MinLength(1) producer!: string;
  /** The event that caused this one, where there is one. */
  @IsOptional() @IsUUID() causationId?: string;
  @IsObject() payload!: Record<string, unknown>;
}

export interface BuildEnvelopeOptions {
  producer: string;
  causationId?: string;
  occurredAt?: Date;
  eventId?: string;
}

/** Validates `payload` against its definition and wraps it; throws ContractViolationError. */
export function buildEnvelope<P extends object>(def: EventDefinition<P>, payload: P, opts: BuildEnvelopeOptions): EventEnvelope {
  return produceEvent(def, payload, opts).envelope;
}

/**
 * A new event: its envelope (what is written) and its payload as validated — the instance a consumer decoding the
 * envelope's text gets (`decodeProduced` hands it on, so the text is not validated a second time in this process).
 */
export function produceEvent<P extends object>(def: EventDefinition<P>, payload: P, opts: BuildEnvelopeOptions): DecodedEvent<P> {
  // The JSON form is validated and is the payload written: validating copies it into instances and accepts no field
  // it would drop, and no contract class transforms a value, so the instances' JSON is this same form.
  const plain = toPlain(payload);
  const valid = validatePayload(def, plain);
  const env: EventEnvelope = {
    eventId: opts.eventId ?? randomUUID(),
    type: def.type,
    version: def.version,
    key: def.keyOf(valid),
    occurredAt: (opts.occurredAt ?? new Date()).toISOString(),
    producer: opts.producer,
    payload: plain as Record<string, unknown>,
  };
  if (opts.causationId) env.causationId = opts.causationId;
  return { envelope: env, payload: valid };
}

export interface DecodedEvent<P extends object> {
  envelope: EventEnvelope;
  payload: P;
}

/** Parses and validates an envelope and its payload read from the wire. */
export function decodeEnvelope<P extends object>(def: EventDefinition<P>, raw: string | Buffer): DecodedEvent<P> {
  let plain: unknown;
  try {
    plain = JSON.parse(raw.toString());
  } catch {
    throw new ContractViolationError(`${def.type} envelope`, ['value is not JSON']);
  }
  const envelope = validateAs(EventEnvelope, plain, `${def.type} envelope`);
  if (envelope.type !== def.type || envelope.version !== def.version) {
    throw new ContractViolationError(`${def.type} envelope`, [
      `type/version is ${envelope.type} v${envelope.version}, expected ${def.type} v${def.version}`,
    ]);
  }
  return { envelope, payload: validatePayload(def, envelope.payload) };
}

/**
 * The decoded form of a message this process has just written with `produceEvent`, given the payload validated there:
 * what `decodeEnvelope` returns for the same text (instances of the same classes, nothing coerced), without
 * transforming or validating the text a second time. Only for text this process produced; anything read from the
 * wire goes through `decodeEnvelope`.
 */
export function decodeProduced<P extends object>(def: EventDefinition<P>, value: string, payload: P): DecodedEvent<P> {
  const envelope = Object.assign(new EventEnvelope(), JSON.parse(value) as object);
  if (envelope.type !== def.type || envelope.version !== def.version) throw new Error(`${envelope.type} v${envelope.version} is not ${def.type} v${def.version}`);
  return { envelope, payload };
}

function toPlain(value: object): unknown {
  return JSON.parse(JSON.stringify(value));
}
