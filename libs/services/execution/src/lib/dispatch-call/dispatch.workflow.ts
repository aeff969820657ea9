import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import { awaitingVerdict, CANCELLED_CODE, type CallState, hasOutcome, inFlightAttempt, isCancelDue, mayRejectUnsent, readyToDispatch, type UsageReport } from '@tollgate/call-life';
import { CallCancelRequested, type CallOutcome, digestOf, type UpstreamResultDto } from '@tollgate/contracts';
import {
  type CallEmission, type CallInput, type CallWorkflow, type DecideInput, type Decision, type DueInput, type LifeChange, type OutboxWriter, type ParkedInput, type ResultInput,
} from '@tollgate/messaging';
import { DEFAULT_STALL_GRACE_MS, OPEN_CASES_BATCH, Reconciliations, STALL_SWEEP_BATCH } from './reconciliations.repository';
import { EXECUTION, EXECUTION_OPTIONS, EXECUTION_OUTBOX } from '../execution.constants';
import { type ExecutionOptions } from '../execution.options';
import { type OpenCall, ReadBackCases } from './read-back-cases';
import {
  type AttemptCommand, type AttemptOutcome, callAuthority, type Dispatch, dispatchedOf, type ExecutionResult, type ReconciledReadBack, type Resolution, toResult,
} from './dispatch';
import { compareReadBack, eligibleBindings } from './call-policy';
import { DispatchCallUseCase } from './dispatch-call.usecase';
import { type LoadedPendingCall, PendingCalls, type ToolBindingRow } from './pending-calls.repository';

/** A command of execution: an attempt's upstream call, or a reconciliation try of a call owed a verdict. */
export type ExecutionCommand = AttemptCommand | { reconcile: OpenCall };

/** What a batch reads once for all its calls: the tools the ready calls name, and the time the decisions are made at. */
interface Context { tools: Map<string, ToolBindingRow>; now: number }
/** Kept beside the state: the request's arguments when it arrives; who decided an unknown outcome, when it is decided. */
type Extra = { arguments?: Record<string, unknown>; resolution?: Resolution };

/**
 * Execution's share of a call's life, run by the messaging kit's workflow runner: a call the model finds ready
 * (`readyToDispatch`: requested and held, nothing decided yet) gets its first dispatch — CallDispatched committed,
 * then the upstream call after commit — or, past its deadline or with no eligible binding, its rejection; a call its
 * agent cancelled before anything was sent (`isCancelDue`) is rejected with CALL_CANCELLED.
 */
@Injectable()
export class DispatchWorkflow implements CallWorkflow<LoadedPendingCall, ExecutionCommand, Extra, Context, ExecutionResult> {
  readonly name = 'execution.calls';
  readonly service = 'execution';
  readonly dueEveryMs: number;
  readonly store;

  constructor(
    @InjectDataSource(EXECUTION) readonly dataSource: DataSource,
    @Inject(EXECUTION_OUTBOX) readonly outbox: OutboxWriter,
    @Inject(EXECUTION_OPTIONS) options: ExecutionOptions,
    private readonly dispatch: DispatchCallUseCase,
    private readonly cases: ReadBackCases,
  ) {
    this.dueEveryMs = options.reconcileIntervalMs;
    const graceS = (options.stallGraceMs ?? DEFAULT_STALL_GRACE_MS) / 1000;
    this.store = {
      lock: (m: EntityManager, ids: readonly string[]) => PendingCalls.lockLives(m, ids),
      save: (m: EntityManager, changes: readonly LifeChange<LoadedPendingCall, Extra>[]) => this.save(m, changes),
      // The reconciler's rounds: attempts interrupted long past their deadline (none in flight in this process), and
      // calls owed a verdict not tried for a round (none being tried here now).
      claimDue: async (m: EntityManager) => [
        ...(await Reconciliations.claimStalled(m, graceS, STALL_SWEEP_BATCH)).filter((c) => !this.dispatch.inFlight.has(c.intent_id)),
        ...(await Reconciliations.claimOpen(m, this.dueEveryMs / 1000, OPEN_CASES_BATCH)).filter((c) => !this.cases.running.has(c.intent_id)),
      ],
    };
  }

  async prepare(m: EntityManager, lives: readonly CallState[]): Promise<Context> {
    const toolIds = [...new Set(lives.filter(readyToDispatch).map((l) => l.request!.toolId))];
    return { tools: await PendingCalls.toolsOf(m, toolIds), now: Date.now() };
  }

  decide({ before, life, inputs, context }: DecideInput<LoadedPendingCall, Context>): Decision<ExecutionCommand, Extra> {
    const extra = { ...argumentsIn(inputs) };
    if (isCancelDue(life)) return { extra, emit: [rejection(life.intentId, CANCELLED_CODE, 'Cancelled by the agent before it was sent to a provider; nothing was performed.')] };
    if (!readyToDispatch(life)) return { extra };
    const request = life.request!;
    const tool = context.tools.get(request.toolId);
    // Past its deadline before anything was sent, the call is a plain failure (the hold is released), not an unknown
    // outcome: the platform knows no provider was called.
    if (new Date(request.deadlineAt).getTime() <= context.now) {
      return { extra, emit: [rejection(life.intentId, 'PROVIDER_SYSTEM_ERROR', 'The call\'s deadline passed before it could be sent to a provider; nothing was performed.')] };
    }
    const bindings = eligibleBindings(tool?.bindings ?? []);
    if (!tool || bindings.length === 0) return { extra, emit: [rejection(life.intentId, 'TOOL_NO_ELIGIBLE_BINDING', 'No healthy provider binding is available for this tool.')] };
    const d: Dispatch = {
      intentId: life.intentId, toolId: request.toolId, bindings, arguments: extra.arguments ?? before?.arguments ?? {}, deadlineAt: new Date(request.deadlineAt),
      outputSchema: tool.output_schema, operationKey: request.operationKey ?? life.intentId, kind: tool.kind ?? 'write', readBack: tool.read_back,
      authority: callAuthority({ owner_id: request.ownerId, agent_id: request.agentId, mcp_url_id: request.mcpUrlId ?? null }), progress: request.progress === true,
      ...(request.metered ? { metered: request.metered } : {}),
    };
    return { extra, emit: [dispatchedOf(d, 1)], commands: [{ dispatch: d, attempt: 1 }] };
  }

  /**
   * Due work, the reconciler's round: an attempt still in flight (the claim found it long past its deadline: its
   * process died mid-call) is reported as stalled — its outcome unknown; a call owed a verdict is tried by its
   * operation key (a command), at most once a round.
   */
  decideDue({ before, life }: DueInput<LoadedPendingCall>): Decision<ExecutionCommand, Extra> {
    const stalled = inFlightAttempt(life);
    if (stalled !== undefined) return this.decideResult({ before, life, result: { type: 'stalled', intentId: life.intentId, attempt: stalled } });
    if (awaitingVerdict(life) === undefined) return {};
    return { commands: [{ reconcile: { intentId: life.intentId, life, arguments: before.arguments } }] };
  }

  /** After commit: one attempt's upstream call, or a reconciliation's read-back (the consumer does not wait for it); what it found is fed back below. */
  run(c: ExecutionCommand): Promise<ExecutionResult | void> {
    return 'reconcile' in c ? this.cases.run(c.reconcile) : this.dispatch.perform(c);
  }

  /** A command's result — an attempt's, the stall sweep's or a reconciliation's verdict — decided under the call's lock. */
  decideResult({ life, result }: Pick<ResultInput<LoadedPendingCall, ExecutionResult>, 'life' | 'result'> & { before?: LoadedPendingCall }): Decision<ExecutionCommand, Extra> {
    const d = decideOnResult(life, result);
    return { emit: d.emit, ...(d.next ? { commands: [d.next] } : {}), ...(d.resolution ? { extra: { resolution: d.resolution } } : {}) };
  }

  /**
   * A parked request or hold: the agent gets EffectRejected now (a platform fault, nothing performed, the hold refunded)
   * instead of waiting for a dispatch that never comes — only while nothing was sent (`mayRejectUnsent`); a call already
   * dispatched is left to its result or its reconciliation. Recorded in the state, so a late redelivery dispatches nothing.
   */
  decideParked({ life, event }: ParkedInput): Decision<ExecutionCommand, Extra> {
    if (event.type === CallCancelRequested.type || !mayRejectUnsent(life)) return {};
    return { emit: [rejection(life.intentId, PARKED_REJECTION_CODE, 'The platform could not send this call to a provider; nothing was performed and the hold is refunded.')] };
  }

  /** The states (with the columns the sweeps query), and the reconciliation's record of a call whose verdict is owed or given. */
  private async save(m: EntityManager, changes: readonly LifeChange<LoadedPendingCall, Extra>[]): Promise<void> {
    await PendingCalls.saveLives(m, changes.map((c) => ({ life: c.life, ...c.extra })));
    await Reconciliations.record(m, changes.map((c) => ({ before: c.before?.life, life: c.life, ...(c.extra?.resolution ? { resolution: c.extra.resolution } : {}) })));
  }
}

/** The request's arguments, when the request is among the inputs (the contract carries them beside the model's facts). */
function argumentsIn(inputs: readonly CallInput[]): Extra {
  for (const i of inputs) {
    const p = i.payload;
    if (i.event.type === 'CallRequested' && 'arguments' in p && typeof p.arguments === 'object' && p.arguments !== null) return { arguments: { ...p.arguments } };
  }
  return {};
}

/** The agent error of a call execution parked before sending it: a platform fault, nothing performed, hold refunded. */
export const PARKED_REJECTION_CODE = 'INTERNAL_SERVER_ERROR';

function rejection(intentId: string, code: string, reason: string): CallEmission {
  return { type: 'EffectRejected', payload: { intentId, attempt: 1, code, reason } };
}

// Execution's decisions on what its commands found: pure functions of the call's state and one result. The runner
// feeds each result back under the call's lock, so a second report of the same attempt finds its slot filled and
// changes nothing — the model is the guard, there is no attempt status to move.

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
  const received = (outcome: CallOutcome, classification: string, result: UpstreamResultDto, digest = digestOf(result), usage?: UsageReport): CallEmission =>
    ({ type: 'ResultReceived', payload: { intentId: d.intentId, attempt, providerId: binding.providerId, outcome, classification, resultDigest: digest, result, ...(usage ? { usage } : {}) } });
  const rejected = (code: string, reason: string): CallEmission => ({ type: 'EffectRejected', payload: { intentId: d.intentId, attempt, code, reason } });
  switch (o.kind) {
    case 'withdrawn':
      return performedNothing(c, received('provider_error', 'binding_withdrawn', errorResult(`Provider ${binding.providerId} no longer serves this tool; it was not called.`)),
        rejected('TOOL_NO_ELIGIBLE_BINDING', 'No provider binding serves this tool any more; nothing was performed.'));
    case 'failed':
      return performedNothing(c, received('provider_error', o.failure === 'refused' ? 'unreachable' : o.failure, errorResult(`Provider ${binding.providerId} failed: ${o.detail}.`)),
        failedRejection(d, attempt, o));
    case 'unknown':
      return { emit: [{ type: 'OutcomeUnknown', payload: { intentId: d.intentId, attempt, providerId: binding.providerId, reason: o.reason, detail: o.detail } }] };
    case 'too_large':
      // R6: the result is not carried in an event; the agent is told how large it was.
      return { emit: [
        received('contract_violation', 'result_too_large', errorResult(`The provider's result (${o.bytes} bytes) was over the ${o.limit}-byte limit and was withheld.`), digestOf(o.upstream)),
        rejected('PROVIDER_CONTRACT_VIOLATION', `The result was ${o.bytes} bytes, over the ${o.limit}-byte limit.`),
      ] };
    case 'received':
      return { emit: [received(o.verdict.outcome, o.verdict.classification, o.upstream, undefined, o.usage), ...checkedEffect(c, o)] };
  }
}

/**
 * Why a call whose last attempt performed nothing is rejected. A provider that needs a client capability the gateway
 * never offers upstream (-32021) refused the request itself: PROVIDER_REQUEST_ERROR naming the capabilities, which the
 * gateway answers a 2026-07-28 agent as its own -32021.
 */
function failedRejection(d: Dispatch, attempt: number, o: Extract<AttemptOutcome, { kind: 'failed' }>): CallEmission {
  const payload = (code: string, reason: string, extra: Record<string, unknown> = {}): CallEmission => ({ type: 'EffectRejected', payload: { intentId: d.intentId, attempt, code, reason, ...extra } });
  if (o.requiredCapabilities) {
    return payload('PROVIDER_REQUEST_ERROR', `The provider needs client capabilities the gateway does not offer (${Object.keys(o.requiredCapabilities).join(', ')}); nothing was performed.`,
      { requiredCapabilities: o.requiredCapabilities });
  }
  if (d.bindings.length > 1) return payload('TOOL_ALL_BINDINGS_FAILED', `All ${d.bindings.length} eligible providers failed; nothing was performed.`);
  return payload('PROVIDER_SYSTEM_ERROR', o.failure === 'not_sent' ? `The provider was not called (${o.detail}); nothing was performed.` : `The provider failed (${o.detail}); nothing was performed.`);
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
  return [{ type: 'EffectConfirmed', payload: { intentId, attempt: c.attempt, method: 'output_contract', providerId, ...(o.usage ? { usage: o.usage } : {}) } }];
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
