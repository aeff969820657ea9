import { type AttemptFacts, type CallState } from './call-state';
import { attemptsOf, failureOf, isConfirmed, resultAttempt, UNKNOWN_OUTCOME_FAILURE } from './decisions';

// Execution's words for one dispatch attempt, read from the call's state: there is no attempt table beside the model.

/** An attempt as execution and its operators speak of it (one word per fact, the glossary's). */
export type AttemptStatus = 'dispatched' | 'result_received' | 'outcome_unknown' | 'failed';

/** Results that say the provider performed nothing (the binding was withdrawn, refused or unreachable): not the tool's own error. */
function performedNothing(a: AttemptFacts): boolean {
  return a.result?.outcome === 'provider_error' && a.result.classification !== 'tool_error';
}

/**
 * The call failed without its tool running to an answer of its own: the provider or the platform could not run it (a
 * task's `failed`) — nothing came back, or what came back says the provider performed nothing (a protocol error, a
 * refusal). Not a tool that ran and answered (its tool error or a contract violation is the answer), not payment's
 * refusal (an answer the agent acts on: top up, ask for approval), not an outcome still being reconciled.
 */
export function failedToRun(state: CallState): boolean {
  const failure = failureOf(state);
  if (!failure || isConfirmed(state) || failure.stage === 'payment' || failure === UNKNOWN_OUTCOME_FAILURE) return false;
  const answered = resultAttempt(state);
  return answered === undefined || performedNothing(state.attempts[String(answered)]!);
}

/**
 * One attempt's word: `dispatched` while nothing came back, `outcome_unknown` once the platform could not know (even
 * when a reconciliation later found its result), `failed` when it performed nothing (the next binding was tried, or
 * the call was rejected), else `result_received`.
 */
export function attemptStatus(state: CallState, attempt: number): AttemptStatus | undefined {
  const a = state.attempts[String(attempt)];
  if (!a?.dispatched && !a?.result && !a?.unknown) return undefined;
  if (a.unknown) return 'outcome_unknown';
  if (!a.result) return 'dispatched';
  return performedNothing(a) ? 'failed' : 'result_received';
}

/** Whether attempt n has its outcome recorded (a result, or an unknown outcome): a second report of it changes nothing. */
export function hasOutcome(state: CallState, attempt: number): boolean {
  const a = state.attempts[String(attempt)];
  return a?.result !== undefined || a?.unknown !== undefined;
}

/** The attempt sent to a provider with nothing back yet: what the stall sweep looks for once its deadline is long past. */
export function inFlightAttempt(state: CallState): number | undefined {
  return attemptsOf(state).find(([, a]) => a.dispatched && !a.result && !a.unknown && !a.confirmed && !a.rejected)?.[0];
}

/**
 * The attempt execution still owes a verdict: its outcome is unknown, or its result came back and could not be checked
 * (a write's read-back could not reach the provider). A reconciliation by operation key is open for it until an
 * EffectConfirmed or EffectRejected is recorded.
 */
export function awaitingVerdict(state: CallState): number | undefined {
  const last = attemptsOf(state).at(-1);
  if (!last) return undefined;
  const [n, a] = last;
  return (a.unknown || (a.result && !performedNothing(a))) && !a.confirmed && !a.rejected && !state.settled && !state.refunded ? n : undefined;
}
