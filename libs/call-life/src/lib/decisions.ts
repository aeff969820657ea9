import { type CallEventType } from './call-event';
import { type AttemptFacts, type CallState, type PaymentRefusal } from './call-state';

/** The glossary's statuses (README): one word per fact, the same in code, API, console and docs. */
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

/** The ends of a life: exactly one is reached by every call (property-tested over the route's lives). */
export const TERMINAL_STATUSES: ReadonlySet<CallStatus> = new Set(['settled', 'refunded', 'payment_rejected']);
/** The events that end a life. */
export const TERMINAL_EVENT_TYPES: readonly CallEventType[] = ['CallSettled', 'CallRefunded', 'PaymentRejected'];

/** The attempts in order of their numbers. */
export function attemptsOf(state: CallState): [number, AttemptFacts][] {
  return Object.entries(state.attempts).map(([n, a]) => [Number(n), a] as [number, AttemptFacts]).sort(([a], [b]) => a - b);
}

function anyAttempt(state: CallState, has: (a: AttemptFacts) => unknown): boolean {
  return attemptsOf(state).some(([, a]) => has(a));
}

/** Later facts win: the status is that of the furthest fact seen, whatever order the facts arrived in. */
export function status(state: CallState): CallStatus | undefined {
  if (state.settled) return 'settled';
  if (state.refunded) return 'refunded';
  if (anyAttempt(state, (a) => a.confirmed)) return 'effect_confirmed';
  if (anyAttempt(state, (a) => a.rejected)) return 'effect_rejected';
  if (anyAttempt(state, (a) => a.result)) return 'result_received';
  if (anyAttempt(state, (a) => a.unknown)) return 'outcome_unknown';
  if (anyAttempt(state, (a) => a.dispatched)) return 'dispatched';
  if (state.paymentRefused) return 'payment_rejected';
  if (state.held) return 'held';
  if (state.request) return 'requested';
  return undefined;
}

export function isTerminal(state: CallState): boolean {
  const s = status(state);
  return s !== undefined && TERMINAL_STATUSES.has(s);
}

/** The highest attempt number sent to a provider (0 before the first dispatch, or when execution refused before sending). */
export function attemptCount(state: CallState): number {
  return attemptsOf(state).filter(([, a]) => a.dispatched || a.result || a.unknown).reduce((n, [a]) => Math.max(n, a), 0);
}

/** The attempt whose result the agent is given: the latest one with a result (a fallback's replaces an earlier one's). */
export function resultAttempt(state: CallState): number | undefined {
  return attemptsOf(state).filter(([, a]) => a.result).map(([n]) => n).pop();
}

/** The attempt whose effect was confirmed, if any. */
export function confirmedAttempt(state: CallState): number | undefined {
  return attemptsOf(state).filter(([, a]) => a.confirmed).map(([n]) => n).pop();
}

/** The effect was confirmed for the very attempt whose result the agent is given. */
export function isConfirmed(state: CallState): boolean {
  const c = confirmedAttempt(state);
  return c !== undefined && c === resultAttempt(state);
}

/** The provider that served the call: the confirmed attempt's, else the latest attempt's. */
export function providerOf(state: CallState): string | undefined {
  const attempts = attemptsOf(state);
  const c = confirmedAttempt(state);
  const confirmed = c === undefined ? undefined : state.attempts[String(c)];
  if (confirmed) return confirmed.confirmed?.providerId ?? confirmed.result?.providerId ?? confirmed.dispatched?.providerId;
  for (let i = attempts.length - 1; i >= 0; i--) {
    const a = attempts[i]![1];
    const provider = a.result?.providerId ?? a.dispatched?.providerId ?? a.unknown?.providerId;
    if (provider) return provider;
  }
  return undefined;
}

/** Execution: the call is paid for (held, free or x402) and nothing was decided for it yet (no dispatch, no rejection). */
export function readyToDispatch(state: CallState): boolean {
  return state.request !== undefined && state.held !== undefined && state.paymentRefused === undefined && Object.keys(state.attempts).length === 0
    && state.cancelRequested === undefined;
}

/**
 * Execution cancels the call now (EffectRejected CALL_CANCELLED, so the hold is refunded): the agent asked, and
 * nothing was sent or decided yet. A cancel that arrives after the first dispatch changes nothing.
 */
export function isCancelDue(state: CallState): boolean {
  return state.cancelRequested !== undefined && state.request !== undefined && state.paymentRefused === undefined && Object.keys(state.attempts).length === 0;
}

/**
 * Execution may still answer the call with a rejection of its own (its event for this call was parked): nothing was
 * sent to a provider or decided for any attempt, and payment did not refuse it (then the agent has its answer).
 */
export function mayRejectUnsent(state: CallState): boolean {
  return Object.keys(state.attempts).length === 0 && state.paymentRefused === undefined;
}

/** Whether the agent may still cancel: nothing sent to a provider and no answer yet (the gateway's view; execution decides). */
export function mayCancel(state: CallState): boolean {
  return !isTerminal(state) && state.paymentRefused === undefined && attemptsOf(state).length === 0;
}

/** The call was cancelled by its agent before dispatch. */
export function wasCancelled(state: CallState): boolean {
  return anyAttempt(state, (a) => a.rejected?.code === CANCELLED_CODE);
}

/** The agent error code of a call cancelled before dispatch. */
export const CANCELLED_CODE = 'CALL_CANCELLED';

/** An attempt whose outcome the platform could not know, with no verdict yet: a reconciliation is open for it. */
export function openUnknownAttempt(state: CallState): number | undefined {
  return attemptsOf(state).find(([, a]) => a.unknown && !a.confirmed && !a.rejected)?.[0];
}

/** What the agent is told when the call failed (the code is one of the spec's agent error codes). */
export interface CallFailure extends Partial<PaymentRefusal> {
  code: string;
  message: string;
  retryable: boolean;
  /** `payment`: nothing was held, so the operation key may run again after a top-up (unless `final`). */
  stage?: 'payment';
}

export const UNKNOWN_OUTCOME_FAILURE: CallFailure = {
  code: 'IDEMPOTENCY_RESULT_UNAVAILABLE', retryable: false,
  message: 'The provider did not confirm the outcome. The call will be reconciled before any new purchase.',
};

/** The failure the agent is answered with: payment's refusal, else the effect's rejection, else an unknown outcome without its verdict yet. */
export function failureOf(state: CallState): CallFailure | undefined {
  if (state.paymentRefused) return { ...state.paymentRefused, stage: 'payment' };
  const rejected = attemptsOf(state).filter(([, a]) => a.rejected).pop()?.[1].rejected;
  if (rejected) return { code: rejected.code, message: rejected.reason, retryable: false, ...(rejected.requiredCapabilities ? { details: { requiredCapabilities: rejected.requiredCapabilities } } : {}) };
  if (openUnknownAttempt(state) !== undefined) return UNKNOWN_OUTCOME_FAILURE;
  return undefined;
}

/** The agent has its answer: refused or failed, or the effect confirmed and the payment fact known (for the receipt). */
export function isAnswered(state: CallState): boolean {
  return (isConfirmed(state) && (state.held !== undefined || state.settled !== undefined || state.refunded !== undefined)) || failureOf(state) !== undefined;
}

/** OutcomeUnknown was recorded and neither a verdict nor a settlement followed yet: a retry is told to wait for it. */
export function isReconciling(state: CallState): boolean {
  return failureOf(state)?.code === UNKNOWN_OUTCOME_FAILURE.code && !isConfirmed(state) && !state.settled && !state.refunded;
}

/** The receipt's status word (G5.3): VERIFYING while the hold is held, then SETTLED (charged) or REFUNDED (nothing charged). */
export type ReceiptStatus = 'VERIFYING' | 'SETTLED' | 'REFUNDED';

export interface ReceiptFacts {
  status: ReceiptStatus;
  providerId?: string;
  classification?: string;
  attempts: number;
  fellBack: boolean;
  heldMinor: bigint;
  chargedMinor: bigint;
  /** A metered call: its unit, unit price and minimum, and the units the confirmed attempt reported. */
  usage?: { unit: string; unitPriceMinor: string; minimumMinor?: string; units?: string };
}

/** The receipt the agent sees, in minor units (the gateway adds asset and display). */
export function receiptOf(state: CallState): ReceiptFacts {
  const amount = BigInt(state.held?.amount.amountMinor ?? state.settled?.amount.amountMinor ?? '0');
  const receiptStatus: ReceiptStatus = state.settled ? 'SETTLED' : state.refunded ? 'REFUNDED' : 'VERIFYING';
  const r = resultAttempt(state);
  const attempts = attemptCount(state);
  return {
    status: receiptStatus,
    providerId: providerOf(state),
    classification: r === undefined ? undefined : state.attempts[String(r)]!.result!.classification,
    attempts,
    fellBack: isConfirmed(state) && attempts > 1,
    heldMinor: receiptStatus === 'VERIFYING' ? amount : 0n,
    // What settlement captured: the hold at a fixed price, the metered charge (≤ the hold) otherwise.
    chargedMinor: state.settled ? BigInt(state.settled.amount.amountMinor) : 0n,
    ...(state.request?.metered ? { usage: usageOf(state, state.request.metered) } : {}),
  };
}

/** A metered call's price and the units its answering attempt reported (none while unknown or unusable). */
function usageOf(state: CallState, price: NonNullable<NonNullable<CallState['request']>['metered']>): NonNullable<ReceiptFacts['usage']> {
  const r = resultAttempt(state);
  // The usage the charge follows (confirmed with the effect), else what the answering result reported.
  const facts = r === undefined ? undefined : state.attempts[String(r)];
  const usage = facts?.confirmed?.usage ?? facts?.result?.usage;
  return { ...price, ...(usage?.units !== undefined && !usage.problem ? { units: usage.units } : {}) };
}

/** How the gateway answers a repeat of a known operation key with the same request (B5). */
export type RepeatVerdict = 'replay' | 'in_progress' | 'stalled' | 'unavailable';

/** How long a stored answer can be replayed (at least 24 h is required; 7 days are kept). */
export const ANSWER_RETENTION_MS = 7 * 24 * 60 * 60_000;

/**
 * "Stalled — being reconciled" only while a reconciliation exists for the attempt: a call that is merely late is still
 * in progress (not charged again; retry); once the verdict arrives its final answer is replayed.
 */
export function repeatVerdict(state: CallState, facts: { createdAt: Date; answerExpired: boolean }, now: number): RepeatVerdict {
  if (facts.answerExpired || now - facts.createdAt.getTime() > ANSWER_RETENTION_MS) return 'unavailable';
  if (isReconciling(state)) return 'stalled';
  if (isAnswered(state)) return 'replay';
  return 'in_progress';
}

/** A retry with the same operation key may run the call again: payment refused it, held nothing, and not for good. */
export function mayRetryUnderSameKey(state: CallState): boolean {
  return state.paymentRefused !== undefined && state.paymentRefused.final !== true && state.held === undefined && attemptCount(state) === 0;
}

/** The call took one of the tool's daily free calls (nothing held). */
export function usedFreeCall(state: CallState): boolean {
  return state.held?.free === true;
}

/** Settlement: the effect is confirmed and money is held for it — pay the provider once the verification window closes. */
export function isSettlementDue(state: CallState): boolean {
  return confirmedAttempt(state) !== undefined && state.held !== undefined && providerOf(state) !== undefined
    && !state.settled && !state.refunded;
}

/** Settlement: the effect was rejected and money is held — give it back. */
export function isRefundDue(state: CallState): boolean {
  return confirmedAttempt(state) === undefined && anyAttempt(state, (a) => a.rejected) && state.held !== undefined
    && !state.settled && !state.refunded;
}

/** Facts that must never appear together for one call. */
export function contradictions(state: CallState): string[] {
  const problems: string[] = [];
  if (state.settled && state.refunded) problems.push('both settled and refunded');
  if (state.paymentRefused && (state.held || attemptCount(state) > 0)) problems.push('payment rejected but held or dispatched');
  if (anyAttempt(state, (a) => a.confirmed) && anyAttempt(state, (a) => a.rejected)) problems.push('effect both confirmed and rejected');
  return problems;
}
