import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import {
  digestOf, EffectConfirmed, EffectRejected, OutcomeUnknown, ResultReceived, type ToolBindingDto, type UnknownOutcomeReason, type UpstreamResultDto,
} from '@tollgate/contracts';
import { appendEmission, type OutboxWriter } from '@tollgate/messaging';
import { callUpstreamTool, UpstreamError } from '@tollgate/mcp-runtime';
import { createLogger } from '@tollgate/observability';
import { EXECUTION, EXECUTION_OUTBOX } from '../execution.constants';
import { MAX_RESULT_BYTES, mayFallBack } from './call-policy';
import { checkResult } from './check-result';
import { DispatchAttempts } from './dispatch-attempts.repository';
import { PendingCallsRepository } from './pending-calls.repository';
import {
  appendReadBackVerdict, type Dispatch, dispatchedOf, readBackResource, type ReadBackOutcome, toResult, upstreamTarget,
} from './dispatch';

export { callAuthority, type CallAuthority, type Dispatch, type ReadBackOutcome, upstreamTarget } from './dispatch';

const logger = createLogger(EXECUTION);

/**
 * Sends a held call to its provider and records the three facts of B4 / C8:
 *   1. CallDispatched — committed BEFORE each attempt leaves;
 *   2. ResultReceived, or OutcomeUnknown when no answer came back;
 *   3. EffectConfirmed / EffectRejected — the output contract for a read, the
 *      read-back by operation key for a write that declares one (C4, C9).
 *
 * Retries (C7): this is the one layer that retries, and only by falling back
 * to the next binding when no effect can have happened (see mayFallBack). An
 * unknown outcome opens a reconciliation; it is never sent again.
 */
@Injectable()
export class DispatchCallUseCase {
  /** Calls this process is performing now: the reconciler leaves them alone. */
  readonly inFlight = new Set<string>();
  private readonly running = new Set<Promise<void>>();
  private readonly pending = new PendingCallsRepository();

  constructor(
    @InjectDataSource(EXECUTION) private readonly dataSource: DataSource,
    @Inject(EXECUTION_OUTBOX) private readonly outbox: OutboxWriter,
  ) {}

  /** Attempt n (a fallback) recorded as dispatched, with its CallDispatched, before it leaves. */
  private async recordDispatch(m: EntityManager, d: Dispatch, attempt: number): Promise<void> {
    const binding = d.bindings[attempt - 1]!;
    await DispatchAttempts.record(m, { intent_id: d.intentId, attempt, binding_id: binding.bindingId, provider_id: binding.providerId });
    await appendEmission(this.outbox, m, dispatchedOf(d, attempt));
  }

  /**
   * Starts the I/O without holding the consumer: the dispatch is already
   * committed, so a crash from here on leaves an attempt the reconciler
   * finds; meanwhile the partition's next calls go out in parallel.
   */
  start(d: Dispatch): void {
    const p: Promise<void> = this.perform(d)
      .catch((err) => logger.error({ err, intentId: d.intentId }, 'dispatch failed inside execution'))
      .finally(() => this.running.delete(p));
    this.running.add(p);
  }

  /** Waits for the calls in flight (graceful shutdown: each is bounded by its deadline). */
  async drain(): Promise<void> {
    await Promise.all([...this.running]);
  }

  /** The upstream I/O, after CallDispatched has committed; falls back between bindings where that is safe. */
  async perform(d: Dispatch): Promise<void> {
    this.inFlight.add(d.intentId);
    try {
      for (let attempt = 1; attempt <= d.bindings.length; attempt++) {
        if (attempt > 1) await this.dataSource.transaction((m) => this.recordDispatch(m, d, attempt));
        const done = await this.attempt(d, attempt);
        if (done) return;
      }
    } finally {
      this.inFlight.delete(d.intentId);
    }
  }

  /** R7: the binding is checked again right before the I/O: the catalog may have dropped it since the dispatch was recorded. */
  private async bindingStillServes(toolId: string, binding: ToolBindingDto): Promise<boolean> {
    const t = await this.pending.bindingsOf(this.dataSource, toolId);
    return t?.status === 'active' && t.bindings.some((b) => b.bindingId === binding.bindingId && b.health !== 'unhealthy');
  }

  /** One attempt; false when the next binding should be tried. */
  private async attempt(d: Dispatch, attempt: number): Promise<boolean> {
    const binding = d.bindings[attempt - 1]!;
    if (!(await this.bindingStillServes(d.toolId, binding))) return this.withdrawn(d, attempt, binding);
    let raw;
    try {
      raw = await callUpstreamTool({
        target: upstreamTarget(binding), scope: { ...d.authority, serverName: binding.providerId }, toolName: binding.upstreamToolName, arguments: d.arguments,
        deadlineAt: d.deadlineAt.getTime(), intentId: d.intentId, operationKey: d.operationKey,
      });
    } catch (error) {
      const failure = error instanceof UpstreamError ? error.kind : 'connection';
      const detail = error instanceof UpstreamError ? error.message : 'the upstream call failed';
      if (mayFallBack(failure, d.kind)) return this.failed(d, attempt, binding, failure, detail);
      return this.unknown(d, attempt, binding, failure === 'deadline' ? 'deadline_passed' : 'connection_lost', detail);
    }
    return this.received(d, attempt, binding, toResult(raw));
  }

  /** The binding was withdrawn before the call left: not called; the last one rejects the call. */
  private async withdrawn(d: Dispatch, attempt: number, binding: ToolBindingDto): Promise<boolean> {
    const last = attempt === d.bindings.length;
    await this.complete(d.intentId, attempt, 'failed', async (m) => {
      const result = toResult({ content: [{ type: 'text', text: `Provider ${binding.providerId} no longer serves this tool; it was not called.` }], isError: true });
      await this.outbox.append(m, ResultReceived, {
        intentId: d.intentId, attempt, providerId: binding.providerId, outcome: 'provider_error', classification: 'binding_withdrawn', resultDigest: digestOf(result), result,
      });
      if (last) await this.outbox.append(m, EffectRejected, { intentId: d.intentId, attempt, code: 'TOOL_NO_ELIGIBLE_BINDING', reason: 'No provider binding serves this tool any more; nothing was performed.' });
    });
    return last;
  }

  /** The provider failed in a way that performed nothing (`mayFallBack`): the next binding is tried; after the last, rejected. */
  private async failed(d: Dispatch, attempt: number, binding: ToolBindingDto, failure: UpstreamError['kind'] | 'connection', detail: string): Promise<boolean> {
    const last = attempt === d.bindings.length;
    logger.warn({ intentId: d.intentId, providerId: binding.providerId, failure, last }, last ? 'every binding failed' : 'falling back to the next binding');
    await this.complete(d.intentId, attempt, 'failed', async (m) => {
      const result = toResult({ content: [{ type: 'text', text: `Provider ${binding.providerId} failed: ${detail}.` }], isError: true });
      await this.outbox.append(m, ResultReceived, {
        intentId: d.intentId, attempt, providerId: binding.providerId, outcome: 'provider_error', classification: failure === 'refused' ? 'unreachable' : failure,
        resultDigest: digestOf(result), result,
      });
      if (!last) return;
      await this.outbox.append(m, EffectRejected, {
        intentId: d.intentId, attempt,
        code: d.bindings.length > 1 ? 'TOOL_ALL_BINDINGS_FAILED' : 'PROVIDER_SYSTEM_ERROR',
        reason: d.bindings.length > 1 ? `All ${d.bindings.length} eligible providers failed; nothing was performed.`
          : failure === 'not_sent' ? `The provider was not called (${detail}); nothing was performed.` : `The provider failed (${detail}); nothing was performed.`,
      });
    });
    return last;
  }

  /** Sent, and no answer came back: the outcome is unknown, reconciled by operation key, never sent again. */
  private async unknown(d: Dispatch, attempt: number, binding: ToolBindingDto, reason: UnknownOutcomeReason, detail: string): Promise<boolean> {
    logger.warn({ intentId: d.intentId, providerId: binding.providerId, reason }, 'outcome unknown after dispatch: reconciling by operation key');
    await this.complete(d.intentId, attempt, 'outcome_unknown', async (m) => {
      await this.outbox.append(m, OutcomeUnknown, { intentId: d.intentId, attempt, providerId: binding.providerId, reason, detail });
      await openReconciliation(m, d.intentId, attempt, reason);
    });
    return true;
  }

  /** A result came back: withheld when too large, else checked (output contract, or a write's read-back). */
  private async received(d: Dispatch, attempt: number, binding: ToolBindingDto, upstream: UpstreamResultDto): Promise<boolean> {
    const bytes = Buffer.byteLength(JSON.stringify(upstream), 'utf8');
    if (bytes > MAX_RESULT_BYTES) return this.tooLarge(d, attempt, binding, upstream, bytes);
    const verdict = checkResult(upstream, d.outputSchema);
    const received = (m: EntityManager) => this.outbox.append(m, ResultReceived, {
      intentId: d.intentId, attempt, providerId: binding.providerId, outcome: verdict.outcome, classification: verdict.classification, resultDigest: digestOf(upstream), result: upstream,
    });
    // C4: a write that declares a read-back is confirmed only by reading the resource back by its key.
    const rb = !verdict.rejection && d.kind === 'write' && d.readBack ? await this.readBack(d, binding) : undefined;
    await this.complete(d.intentId, attempt, 'result_received', async (m) => {
      await received(m);
      if (verdict.rejection) {
        await this.outbox.append(m, EffectRejected, { intentId: d.intentId, attempt, code: verdict.rejection.code, reason: verdict.rejection.reason });
      } else if (rb?.status === 'unreachable') {
        await openReconciliation(m, d.intentId, attempt, 'read_back_unreachable');
      } else if (rb) {
        await this.appendReadBackVerdict(m, d, attempt, binding.providerId, rb);
      } else {
        await this.outbox.append(m, EffectConfirmed, { intentId: d.intentId, attempt, method: 'output_contract', providerId: binding.providerId });
      }
    });
    return true;
  }

  /** R6: a result over the size limit is refused and not carried in an event; the agent is told how large it was. */
  private async tooLarge(d: Dispatch, attempt: number, binding: ToolBindingDto, upstream: UpstreamResultDto, bytes: number): Promise<boolean> {
    const withheld = toResult({ content: [{ type: 'text', text: `The provider's result (${bytes} bytes) was over the ${MAX_RESULT_BYTES}-byte limit and was withheld.` }], isError: true });
    await this.complete(d.intentId, attempt, 'result_received', async (m) => {
      await this.outbox.append(m, ResultReceived, {
        intentId: d.intentId, attempt, providerId: binding.providerId, outcome: 'contract_violation', classification: 'result_too_large', resultDigest: digestOf(upstream), result: withheld,
      });
      await this.outbox.append(m, EffectRejected, { intentId: d.intentId, attempt, code: 'PROVIDER_CONTRACT_VIOLATION', reason: `The result was ${bytes} bytes, over the ${MAX_RESULT_BYTES}-byte limit.` });
    });
    return true;
  }

  /** Reads a write's resource back through the declared read-back tool, by operation key. */
  readBack(d: Pick<Dispatch, 'intentId' | 'operationKey' | 'readBack' | 'authority'>, binding: ToolBindingDto): Promise<ReadBackOutcome> {
    return readBackResource(d, binding);
  }

  /** C6, last row: a disagreeing read-back keeps the real resource and is never reported as success. */
  appendReadBackVerdict(
    m: EntityManager, d: Pick<Dispatch, 'intentId' | 'arguments' | 'readBack'>, attempt: number, providerId: string,
    rb: Exclude<ReadBackOutcome, { status: 'unreachable' }>, method: 'read_back' | 'reconciliation' = 'read_back',
  ): Promise<void> {
    return appendReadBackVerdict(this.outbox, m, { ...d, attempt, providerId, method }, rb);
  }

  /** Moves an attempt out of `dispatched` exactly once, with its facts, in one transaction. */
  async complete(intentId: string, attempt: number, status: 'result_received' | 'outcome_unknown' | 'failed', write: (m: EntityManager) => Promise<void>): Promise<boolean> {
    return this.dataSource.transaction(async (m) => {
      const moved = await DispatchAttempts.complete(m, intentId, attempt, status);
      if (moved) await write(m);
      return moved;
    });
  }
}

/** An unknown outcome to reconcile, in the caller's transaction (one per call). */
export const openReconciliation = DispatchAttempts.openReconciliation;
