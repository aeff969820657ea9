import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { awaitingVerdict } from '@tollgate/call-life';
import { feedResult } from '@tollgate/messaging';
import { createLogger } from '@tollgate/observability';
import { type Resolution } from '../dispatch-call/dispatch';
import { callAuthority, DispatchCallUseCase } from '../dispatch-call/dispatch-call.usecase';
import { DispatchWorkflow } from '../dispatch-call/dispatch.workflow';
import { PendingCalls, type ToolBindingRow } from '../dispatch-call/pending-calls.repository';
import { EXECUTION, EXECUTION_OPTIONS } from '../execution.constants';
import { type ExecutionOptions } from '../execution.options';
import { type OpenCase, Reconciliations } from '../dispatch-call/reconciliations.repository';

export { type Resolution } from '../dispatch-call/dispatch';

/** A dispatched attempt with no result this long past its deadline was interrupted (the process died mid-call). */
export const DEFAULT_STALL_GRACE_MS = 5_000;
/** Most interrupted attempts reported per sweep round, oldest first (the rest in the next round). */
export const STALL_SWEEP_BATCH = 100;

const logger = createLogger(EXECUTION);

/**
 * B5, C6: every call whose outcome is unknown ends in exactly one terminal state. Interrupted attempts (the model's
 * `inFlightAttempt`, long past the deadline) are reported to the dispatch workflow as stalled; each call owed a
 * verdict (`awaitingVerdict`) is looked up at the provider by its operation key through the tool's declared
 * read-back, and what it found is fed back as the verdict. Read-only calls had no effect to find: resolved as not
 * delivered (refunded). Where the provider cannot answer, the case stays open for an operator (ops CLI), whose
 * decision goes the same way — never a new dispatch.
 */
@Injectable()
export class ReconcileCallsUseCase {

  constructor(
    @InjectDataSource(EXECUTION) private readonly dataSource: DataSource,
    private readonly dispatch: DispatchCallUseCase,
    private readonly workflow: DispatchWorkflow,
    @Inject(EXECUTION_OPTIONS) private readonly options: ExecutionOptions,
  ) {}

  /** One round: report interrupted attempts, then try every open case once. */
  async sweep(): Promise<void> {
    const stalled = await Reconciliations.stalled(this.dataSource, (this.options.stallGraceMs ?? DEFAULT_STALL_GRACE_MS) / 1000, STALL_SWEEP_BATCH);
    for (const s of stalled) {
      if (this.dispatch.inFlight.has(s.intent_id) || s.in_flight_attempt === null) continue;
      logger.warn({ intentId: s.intent_id, attempt: s.in_flight_attempt }, 'dispatched attempt interrupted: reconciling by operation key');
      await feedResult(this.workflow, { type: 'stalled', intentId: s.intent_id, attempt: s.in_flight_attempt });
    }
    const open = await Reconciliations.openCases(this.dataSource, 20);
    const tools = await PendingCalls.toolsOf(this.dataSource, [...new Set(open.flatMap((c) => (c.tool_id ? [c.tool_id] : [])))], 'any');
    for (const c of open) {
      await this.tryCase(c, c.tool_id ? tools.get(c.tool_id) : undefined).catch((err) => logger.error({ err, intentId: c.intent_id }, 'reconciliation attempt failed'));
    }
  }

  private async tryCase(c: OpenCase, tool: ToolBindingRow | undefined): Promise<void> {
    const attempt = awaitingVerdict(c.life);
    if (attempt === undefined) return;
    const at = new Date().toISOString();
    if (tool?.kind === 'read') {
      await Reconciliations.noteTry(this.dataSource, c.intent_id, null);
      await this.resolve(c.intent_id, { decision: 'did_not_happen', by: 'reconciler', at, why: 'a read-only call has no effect to find; its result never reached the agent' });
      return;
    }
    const bindingId = c.life.attempts[String(attempt)]?.dispatched?.bindingId;
    const binding = tool?.bindings.find((b) => b.bindingId === bindingId);
    if (!tool?.read_back || !binding) {
      await Reconciliations.noteTry(this.dataSource, c.intent_id, 'the tool declares no read-back: an operator decides');
      return;
    }
    const args = c.arguments ?? {};
    const outcome = await this.dispatch.readBack({ intentId: c.intent_id, operationKey: c.operation_key ?? c.intent_id, readBack: tool.read_back, authority: callAuthority(c) }, binding);
    await Reconciliations.noteTry(this.dataSource, c.intent_id, outcome.status === 'unreachable' ? outcome.detail : null);
    if (outcome.status === 'unreachable') return;
    await feedResult(this.workflow, {
      type: 'verdict', intentId: c.intent_id, attempt, resolution: { decision: outcome.status === 'found' ? 'happened' : 'did_not_happen', by: 'reconciler', at, why: `read back by operation key: ${outcome.status}` },
      readBack: { outcome, providerId: binding.providerId, dispatch: { arguments: args, readBack: tool.read_back } },
    });
  }

  /** An operator's (or the reconciler's) decision, recorded once with who, when and why: `not_open` when no verdict is owed. */
  async resolve(intentId: string, r: Resolution): Promise<'resolved' | 'not_open'> {
    const life = await PendingCalls.lifeOf(this.dataSource, intentId);
    const attempt = life && awaitingVerdict(life);
    if (attempt === undefined) return 'not_open';
    const emitted = await feedResult(this.workflow, { type: 'verdict', intentId, attempt, resolution: r });
    return emitted.length > 0 ? 'resolved' : 'not_open';
  }

  list(state: 'open' | 'resolved' | 'all') {
    return Reconciliations.list(this.dataSource, state);
  }
}
