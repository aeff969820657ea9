import { awaitingVerdict, type CallState, hasOutcome, inFlightAttempt } from '@tollgate/call-life';
import { type CallOutcome, digestOf, type UnknownOutcomeReason, type UpstreamResultDto } from '@tollgate/contracts';
import { type CallEmission } from '@tollgate/messaging';
import { compareReadBack } from './call-policy';
import { type ResultVerdict } from './check-result';
import { type Dispatch, dispatchedOf, type ReadBackOutcome, toResult } from './dispatch';

// Execution's decisions on what its commands found: pure functions of the call's state and one result. The runner
// feeds each result back under the call's lock, so a second report of the same attempt finds its slot filled and
// changes nothing — the model is the guard, there is no attempt status to move.

/** One attempt of a dispatch: the command the workflow runs after CallDispatched of that attempt committed. */
export interface AttemptCommand {
  dispatch: Dispatch;
  attempt: number;
}

/** What one attempt's I/O found. */
export type AttemptOutcome =
  | { kind: 'withdrawn' }
  | { kind: 'failed'; failure: string; detail: string }
  | { kind: 'unknown'; reason: UnknownOutcomeReason; detail: string }
  | { kind: 'too_large'; upstream: UpstreamResultDto; bytes: number; limit: number }
  | { kind: 'received'; upstream: UpstreamResultDto; verdict: ResultVerdict; readBack?: ReadBackOutcome };

/** Who decided an unknown outcome, when and why (kept on the reconciliation's record). */
export interface Resolution {
  decision: 'happened' | 'did_not_happen';
  by: string;
  at: string;
  why: string;
}

/** A command's result, fed back to the dispatch workflow. */
export type ExecutionResult =
  | ({ type: 'attempt'; intentId: string; outcome: AttemptOutcome } & AttemptCommand)
  /** The stall sweep: the attempt is still in flight long past its deadline (its process died mid-call). */
  | { type: 'stalled'; intentId: string; attempt: number }
  /** A reconciliation's verdict: the read-back by operation key, or an operator's decision. */
  | { type: 'verdict'; intentId: string; attempt: number; resolution: Resolution; readBack?: ReconciledReadBack };

/** A read-back that answered, with what the verdict compares it with. */
export interface ReconciledReadBack {
  outcome: Exclude<ReadBackOutcome, { status: 'unreachable' }>;
  providerId: string;
  dispatch: Pick<Dispatch, 'arguments' | 'readBack'>;
}

export interface ResultDecision {
  emit: CallEmission[];
  next?: AttemptCommand;
  resolution?: Resolution;
}

/** What execution decides on a command's result. */
export function decideOnResult(life: CallState, r: ExecutionResult): ResultDecision {
  switch (r.type) {
    case 'attempt':
      return hasOutcome(life, r.attempt) ? { emit: [] } : decideAttempt(r, r.outcome);
    case 'stalled': {
      const sent = life.attempts[String(r.attempt)]?.dispatched;
      if (inFlightAttempt(life) !== r.attempt || !sent) return { emit: [] };
      return { emit: [{ type: 'OutcomeUnknown', payload: {
        intentId: r.intentId, attempt: r.attempt, providerId: sent.providerId, reason: 'execution_interrupted',
        detail: 'the attempt was dispatched and no result was recorded before its deadline',
      } }] };
    }
    case 'verdict':
      return awaitingVerdict(life) === r.attempt ? { emit: verdictOf(life, r), resolution: r.resolution } : { emit: [] };
  }
}

function decideAttempt(c: AttemptCommand, o: AttemptOutcome): ResultDecision {
  const { dispatch: d, attempt } = c;
  const binding = d.bindings[attempt - 1]!;
  const received = (outcome: CallOutcome, classification: string, result: UpstreamResultDto, digest = digestOf(result)): CallEmission =>
    ({ type: 'ResultReceived', payload: { intentId: d.intentId, attempt, providerId: binding.providerId, outcome, classification, resultDigest: digest, result } });
  const rejected = (code: string, reason: string): CallEmission => ({ type: 'EffectRejected', payload: { intentId: d.intentId, attempt, code, reason } });
  switch (o.kind) {
    case 'withdrawn':
      return performedNothing(c, received('provider_error', 'binding_withdrawn', errorResult(`Provider ${binding.providerId} no longer serves this tool; it was not called.`)),
        rejected('TOOL_NO_ELIGIBLE_BINDING', 'No provider binding serves this tool any more; nothing was performed.'));
    case 'failed': {
      const many = d.bindings.length > 1;
      return performedNothing(c, received('provider_error', o.failure === 'refused' ? 'unreachable' : o.failure, errorResult(`Provider ${binding.providerId} failed: ${o.detail}.`)),
        rejected(many ? 'TOOL_ALL_BINDINGS_FAILED' : 'PROVIDER_SYSTEM_ERROR', many ? `All ${d.bindings.length} eligible providers failed; nothing was performed.`
          : o.failure === 'not_sent' ? `The provider was not called (${o.detail}); nothing was performed.` : `The provider failed (${o.detail}); nothing was performed.`));
    }
    case 'unknown':
      return { emit: [{ type: 'OutcomeUnknown', payload: { intentId: d.intentId, attempt, providerId: binding.providerId, reason: o.reason, detail: o.detail } }] };
    case 'too_large':
      // R6: the result is not carried in an event; the agent is told how large it was.
      return { emit: [
        received('contract_violation', 'result_too_large', errorResult(`The provider's result (${o.bytes} bytes) was over the ${o.limit}-byte limit and was withheld.`), digestOf(o.upstream)),
        rejected('PROVIDER_CONTRACT_VIOLATION', `The result was ${o.bytes} bytes, over the ${o.limit}-byte limit.`),
      ] };
    case 'received':
      return { emit: [received(o.verdict.outcome, o.verdict.classification, o.upstream), ...checkedEffect(c, o)] };
  }
}

/** The attempt performed nothing: the next binding is dispatched in the same transaction, or after the last the call is rejected. */
function performedNothing(c: AttemptCommand, result: CallEmission, rejection: CallEmission): ResultDecision {
  if (c.attempt >= c.dispatch.bindings.length) return { emit: [result, rejection] };
  const next = { dispatch: c.dispatch, attempt: c.attempt + 1 };
  return { emit: [result, dispatchedOf(c.dispatch, next.attempt)], next };
}

/** C4: a tool error or a broken contract rejects; a write's read-back decides (unreachable: the verdict waits for a reconciliation). */
function checkedEffect(c: AttemptCommand, o: Extract<AttemptOutcome, { kind: 'received' }>): CallEmission[] {
  const { intentId } = c.dispatch;
  const providerId = c.dispatch.bindings[c.attempt - 1]!.providerId;
  if (o.verdict.rejection) return [{ type: 'EffectRejected', payload: { intentId, attempt: c.attempt, ...o.verdict.rejection } }];
  if (o.readBack?.status === 'unreachable') return [];
  if (o.readBack) return readBackVerdict(intentId, c.attempt, { outcome: o.readBack, providerId, dispatch: c.dispatch }, 'read_back');
  return [{ type: 'EffectConfirmed', payload: { intentId, attempt: c.attempt, method: 'output_contract', providerId } }];
}

/** C6, last row: a disagreeing read-back keeps the real resource and is never reported as success. */
export function readBackVerdict(intentId: string, attempt: number, rb: ReconciledReadBack, method: 'read_back' | 'reconciliation'): CallEmission[] {
  const reject = (reason: string, difference?: Record<string, unknown>): CallEmission[] =>
    [{ type: 'EffectRejected', payload: { intentId, attempt, code: 'PROVIDER_CONTRACT_VIOLATION', reason, ...(difference ? { difference } : {}) } }];
  if (rb.outcome.status === 'missing') return reject('The provider reported success, but the resource cannot be read back by its operation key.');
  const difference = compareReadBack(rb.dispatch.readBack!, rb.dispatch.arguments, rb.outcome.resource);
  if (Object.keys(difference).length > 0) return reject('The resource read back differs from the request; it is kept as it is, for a repair decision.', difference);
  return [{ type: 'EffectConfirmed', payload: { intentId, attempt, method, providerId: rb.providerId } }];
}

/** B5, C6: the verdict on an unknown outcome — from the read-back by operation key, or recorded by an operator. */
function verdictOf(life: CallState, r: Extract<ExecutionResult, { type: 'verdict' }>): CallEmission[] {
  const { intentId, attempt } = r;
  const a = life.attempts[String(attempt)]!;
  const providerId = r.readBack?.providerId ?? a.dispatched?.providerId ?? a.unknown?.providerId ?? '';
  const result = (classification: string, body: UpstreamResultDto): CallEmission[] => (a.result ? [] : [{ type: 'ResultReceived', payload: {
    intentId, attempt, providerId, outcome: 'success', classification, resultDigest: digestOf(body), result: body,
  } }]);
  const rejected = (reason: string): CallEmission[] => [{ type: 'EffectRejected', payload: { intentId, attempt, code: 'PROVIDER_SYSTEM_ERROR', reason } }];
  if (r.readBack) {
    const rb = r.readBack.outcome;
    if (rb.status === 'missing' && !a.result) return rejected('Reconciled by operation key: the provider has no record of the operation; it did not happen and is not charged.');
    return [...(rb.status === 'found' ? result('reconciled', rb.result) : []), ...readBackVerdict(intentId, attempt, r.readBack, 'reconciliation')];
  }
  if (r.resolution.decision === 'did_not_happen') return rejected(`Reconciled: the operation did not happen (recorded by ${r.resolution.by}: ${r.resolution.why})`.slice(0, 500));
  const told = toResult({ content: [{ type: 'text', text: `Reconciled: the operation happened (recorded by ${r.resolution.by}). The provider's own response was lost.` }] });
  return [...result('reconciled_by_operator', told), { type: 'EffectConfirmed', payload: { intentId, attempt, method: 'reconciliation', providerId } }];
}

function errorResult(text: string): UpstreamResultDto {
  return toResult({ content: [{ type: 'text', text }], isError: true });
}
