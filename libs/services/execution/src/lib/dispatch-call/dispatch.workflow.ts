import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import { CANCELLED_CODE, type CallState, isCancelDue, readyToDispatch } from '@tollgate/call-life';
import { CallCancelRequested, type EventDefinition } from '@tollgate/contracts';
import {
  type CallEmission, type CallInput, type CallWorkflow, type DecideInput, type Decision, type LifeChange, type OutboxWriter, type ParkedContext, type ResultInput,
} from '@tollgate/messaging';
import { Reconciliations } from '../reconcile-calls/reconciliations.repository';
import { EXECUTION, EXECUTION_OUTBOX } from '../execution.constants';
import { type AttemptCommand, decideOnResult, type ExecutionResult, type Resolution } from './attempt-verdict';
import { eligibleBindings } from './call-policy';
import { callAuthority, type Dispatch, dispatchedOf } from './dispatch';
import { DispatchCallUseCase } from './dispatch-call.usecase';
import { type LoadedPendingCall, PendingCallsRepository, type ToolBindingRow } from './pending-calls.repository';
import { RejectParkedCallUseCase } from './reject-parked-call.usecase';

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
export class DispatchWorkflow implements CallWorkflow<LoadedPendingCall, AttemptCommand, Extra, Context, ExecutionResult> {
  readonly name = 'execution.calls';
  readonly service = 'execution';
  readonly decisions = ['readyToDispatch', 'isCancelDue'];
  readonly store;
  private readonly pending = new PendingCallsRepository();

  constructor(
    @InjectDataSource(EXECUTION) readonly dataSource: DataSource,
    @Inject(EXECUTION_OUTBOX) readonly outbox: OutboxWriter,
    private readonly dispatch: DispatchCallUseCase,
    private readonly rejectParked: RejectParkedCallUseCase,
  ) {
    this.store = {
      lock: (m: EntityManager, ids: readonly string[]) => this.pending.lockLives(m, ids),
      save: (m: EntityManager, changes: readonly LifeChange<LoadedPendingCall, Extra>[]) => this.save(m, changes),
    };
  }

  async prepare(m: EntityManager, lives: readonly CallState[]): Promise<Context> {
    const toolIds = [...new Set(lives.filter(readyToDispatch).map((l) => l.request!.toolId))];
    return { tools: await this.pending.toolsOf(m, toolIds), now: Date.now() };
  }

  decide({ before, life, inputs, context }: DecideInput<LoadedPendingCall, Context>): Decision<AttemptCommand, Extra> {
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
      authority: callAuthority({ owner_id: request.ownerId, agent_id: request.agentId, mcp_url_id: request.mcpUrlId ?? null }),
    };
    return { extra, emit: [dispatchedOf(d, 1)], commands: [{ dispatch: d, attempt: 1 }] };
  }

  /** After commit: one attempt's upstream call (the consumer does not wait for it); what it found is fed back below. */
  run(c: AttemptCommand): Promise<ExecutionResult> {
    return this.dispatch.perform(c);
  }

  /** A command's result — an attempt's, the stall sweep's or a reconciliation's verdict — decided under the call's lock. */
  decideResult({ life, result }: ResultInput<LoadedPendingCall, ExecutionResult>): Decision<AttemptCommand, Extra> {
    const d = decideOnResult(life, result);
    return { emit: d.emit, ...(d.next ? { commands: [d.next] } : {}), ...(d.resolution ? { extra: { resolution: d.resolution } } : {}) };
  }

  /** A parked request or hold: the agent gets EffectRejected (nothing sent) instead of waiting for its deadline. */
  async onParked(event: EventDefinition<object>, { manager, intentId, eventId }: ParkedContext<object>): Promise<void> {
    if (event.type !== CallCancelRequested.type) await this.rejectParked.execute(manager, { ...(intentId ? { intentId } : {}), ...(eventId ? { causationId: eventId } : {}) });
  }

  /** The states (with the columns the sweeps query), and the reconciliation's record of a call whose verdict is owed or given. */
  private async save(m: EntityManager, changes: readonly LifeChange<LoadedPendingCall, Extra>[]): Promise<void> {
    await this.pending.saveLives(m, changes.map((c) => ({ life: c.life, ...c.extra })));
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

function rejection(intentId: string, code: string, reason: string): CallEmission {
  return { type: 'EffectRejected', payload: { intentId, attempt: 1, code, reason } };
}
