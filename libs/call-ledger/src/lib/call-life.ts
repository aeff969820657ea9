/**
 * The call life as a pure function of its events (ARCHITECTURE.md). Events
 * of one call may reach a projection out of order (they travel on different
 * topics), so the status is derived from the SET of facts seen, never from
 * the order they arrived in.
 */
export const CALL_LIFE_EVENT_TYPES = [
  'CallRequested',
  'PaymentHeld',
  'PaymentRejected',
  'CallDispatched',
  'ResultReceived',
  'OutcomeUnknown',
  'EffectConfirmed',
  'EffectRejected',
  'CallSettled',
  'CallRefunded',
] as const;
export type CallLifeEventType = (typeof CALL_LIFE_EVENT_TYPES)[number];

export type CallStatus =
  | 'requested'
  | 'held'
  | 'payment_rejected'
  | 'dispatched'
  | 'result_received'
  | 'outcome_unknown'
  | 'effect_confirmed'
  | 'effect_rejected'
  | 'settled'
  | 'refunded';

/** Later facts win: each status is reached by its event, whatever else was seen. Highest rank first. */
const PRECEDENCE: readonly [CallLifeEventType, CallStatus][] = [
  ['CallSettled', 'settled'],
  ['CallRefunded', 'refunded'],
  ['EffectConfirmed', 'effect_confirmed'],
  ['EffectRejected', 'effect_rejected'],
  ['ResultReceived', 'result_received'],
  ['OutcomeUnknown', 'outcome_unknown'],
  ['CallDispatched', 'dispatched'],
  ['PaymentRejected', 'payment_rejected'],
  ['PaymentHeld', 'held'],
  ['CallRequested', 'requested'],
];

export const TERMINAL_STATUSES: ReadonlySet<CallStatus> = new Set(['settled', 'refunded', 'payment_rejected']);

export function isCallLifeEventType(type: string): type is CallLifeEventType {
  return (CALL_LIFE_EVENT_TYPES as readonly string[]).includes(type);
}

/** The call's status given the event types recorded for it (duplicates and order do not matter). */
export function deriveCallStatus(types: Iterable<string>): CallStatus | undefined {
  const seen = new Set(types);
  return PRECEDENCE.find(([type]) => seen.has(type))?.[1];
}

/**
 * Facts that must never appear together for one call: a call is settled or
 * refunded, not both; a rejected payment is never dispatched.
 */
export function contradictions(types: Iterable<string>): string[] {
  const seen = new Set(types);
  const problems: string[] = [];
  if (seen.has('CallSettled') && seen.has('CallRefunded')) problems.push('both settled and refunded');
  if (seen.has('PaymentRejected') && (seen.has('PaymentHeld') || seen.has('CallDispatched'))) problems.push('payment rejected but held or dispatched');
  if (seen.has('EffectConfirmed') && seen.has('EffectRejected')) problems.push('effect both confirmed and rejected');
  return problems;
}
