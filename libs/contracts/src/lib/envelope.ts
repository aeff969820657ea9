import { randomUUID } from 'node:crypto';
import { plainToInstance } from 'class-transformer';
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
  const valid = validatePayload(def, toPlain(payload));
  const env: EventEnvelope = {
    eventId: opts.eventId ?? randomUUID(),
    type: def.type,
    version: def.version,
    key: def.keyOf(valid),
    occurredAt: (opts.occurredAt ?? new Date()).toISOString(),
    producer: opts.producer,
    payload: toPlain(valid) as Record<string, unknown>,
  };
  if (opts.causationId) env.causationId = opts.causationId;
  return env;
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
 * The decoded form of a message this process has just written with `buildEnvelope`, whose payload was validated
 * there: what `decodeEnvelope` returns for the same text (the same instances, nothing coerced), without validating the
 * text a second time. Only for text this process produced; anything read from the wire goes through `decodeEnvelope`.
 */
export function decodeProduced<P extends object>(def: EventDefinition<P>, value: string): DecodedEvent<P> {
  const envelope = plainToInstance(EventEnvelope, JSON.parse(value) as object, { enableImplicitConversion: false });
  if (envelope.type !== def.type || envelope.version !== def.version) throw new Error(`${envelope.type} v${envelope.version} is not ${def.type} v${def.version}`);
  return { envelope, payload: plainToInstance(def.payload, envelope.payload, { enableImplicitConversion: false }) };
}

function toPlain(value: object): unknown {
  return JSON.parse(JSON.stringify(value));
}
