import { callEvent, type CallEvent, type CallEventType, type CallFacts } from '@tollgate/call-life';
import {
  CallCancelRequested, CallDispatched, CallRefunded, CallRequested, CallSettled, EffectConfirmed, EffectRejected, type EventDefinition, OutcomeUnknown,
  PaymentHeld, PaymentRejected, type PayloadOf, ResultReceived,
} from '@tollgate/contracts';

/**
 * The one list of call-life events: each model fact with its contract. The `satisfies` clause is the compile-time
 * proof that every contract's payload carries the fact the model reads (a field renamed on one side fails the build).
 */
export const CALL_EVENTS = {
  CallRequested, PaymentHeld, PaymentRejected, CallCancelRequested, CallDispatched, ResultReceived, OutcomeUnknown, EffectConfirmed, EffectRejected,
  CallSettled, CallRefunded,
} as const satisfies { readonly [T in CallEventType]: EventDefinition<CallFacts[T]> };

/** The contract payload of a call event (what is written to the log: the fact and any field the model does not keep). */
export type CallPayload<T extends CallEventType> = PayloadOf<(typeof CALL_EVENTS)[T]>;

/** An event a workflow emits: a contract payload, so the outbox validates exactly what the model folds. */
export type CallEmission = { [T in CallEventType]: { type: T; payload: CallPayload<T> } }[CallEventType];

/** The definitions of these call events (what a workflow subscribes to). */
export function callEventDefinitions(types: readonly CallEventType[]): EventDefinition<object>[] {
  return types.map((t): EventDefinition<object> => CALL_EVENTS[t]);
}

/**
 * A decoded event as the model's typed fact. The consumer decoded the payload into its contract class (validated);
 * `instanceof` that class is the runtime proof the type needs, so no cast is involved. Undefined for anything else.
 */
export function callEventOf(type: string, payload: object): CallEvent | undefined {
  return isCallType(type) ? typedCallEvent(type, payload) : undefined;
}

/** CALL_EVENTS seen through its `satisfies` type: indexed by a type parameter, each definition's payload is that fact. */
const BY_FACT: { readonly [T in CallEventType]: EventDefinition<CallFacts[T]> } = CALL_EVENTS;

function typedCallEvent<T extends CallEventType>(type: T, payload: object): CallEvent | undefined {
  const definition = BY_FACT[type];
  return payload instanceof definition.payload ? callEvent(type, payload) : undefined;
}

function isCallType(type: string): type is CallEventType {
  return Object.prototype.hasOwnProperty.call(CALL_EVENTS, type);
}

/** An emission as the model's fact: each contract payload is assignable to its fact, so no conversion is needed. */
export function emittedFact(e: CallEmission): CallEvent {
  return e;
}
