import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { type UsageReport } from '@tollgate/call-life';
import { CallProgressed, type ToolBindingDto, type UpstreamResultDto } from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { callUpstreamTool, takeSettlementOverrides, UpstreamError } from '@tollgate/mcp-runtime';
import { createLogger } from '@tollgate/observability';
import { EXECUTION, EXECUTION_OPTIONS, EXECUTION_OUTBOX } from '../execution.constants';
import { type ExecutionOptions } from '../execution.options';
import { MAX_RESULT_BYTES, mayFallBack } from './call-policy';
import { checkResult } from './check-result';
import {
  type AttemptCommand, type AttemptOutcome, type Dispatch, type ExecutionResult, readBackResource, type ReadBackOutcome, toResult, upstreamTarget,
} from './dispatch';
import { PendingCalls } from './pending-calls.repository';
import { ProviderSlots } from './provider-slots';
import { usageReportOf } from './usage-report';
import { type ProgressRelay, relayProgress } from './progress-relay';

export { callAuthority, type CallAuthority, type Dispatch, type ReadBackOutcome, upstreamTarget } from './dispatch';

const logger = createLogger(EXECUTION);
/** How long an outcome waits for its progress notices (and the closing one) to be published (a broker that is away costs no more). */
const PROGRESS_FLUSH_MS = 1_000;
/** Calls to one provider at once when the options say nothing (EXECUTION_PROVIDER_CONCURRENCY's default). */
const DEFAULT_PROVIDER_CONCURRENCY = 64;

/**
 * The I/O of one dispatch attempt, run by the workflow runner after that attempt's CallDispatched committed (B4): the
 * provider is called and what came back is reported — a result (checked against the output contract, and for a write
 * that declares one, read back by operation key: C4, C9), no answer (an unknown outcome), or a failure that performed
 * nothing. The report is the command's result: the runner feeds it back to `DispatchWorkflow`, which records
 * ResultReceived / OutcomeUnknown and EffectConfirmed / EffectRejected, or falls back to the next binding (C7).
 */
@Injectable()
export class DispatchCallUseCase {
  /** Calls this process is performing now: the stall sweep leaves them alone. */
  readonly inFlight = new Set<string>();
  /** Each provider's bound of calls at once: a slow provider holds up its own calls only. */
  readonly slots: ProviderSlots;

  constructor(
    @InjectDataSource(EXECUTION) private readonly dataSource: DataSource,
    @Inject(EXECUTION_OUTBOX) private readonly outbox: OutboxWriter,
    @Inject(EXECUTION_OPTIONS) options: Pick<ExecutionOptions, 'providerConcurrency'> = {},
  ) {
    const bound = options.providerConcurrency ?? { default: DEFAULT_PROVIDER_CONCURRENCY, overrides: {} };
    this.slots = new ProviderSlots((providerId) => bound.overrides[providerId] ?? bound.default);
  }

  /** One attempt's I/O (bounded by the call's deadline; a graceful stop waits for it: `drainCommands`). */
  async perform(c: AttemptCommand): Promise<ExecutionResult> {
    this.inFlight.add(c.dispatch.intentId);
    try {
      return { type: 'attempt', intentId: c.dispatch.intentId, ...c, outcome: await this.attempt(c.dispatch, c.attempt) };
    } finally {
      this.inFlight.delete(c.dispatch.intentId);
    }
  }

  /** R7: the binding is checked again right before the I/O: the catalog may have dropped it since the dispatch was recorded. */
  private async bindingStillServes(toolId: string, binding: ToolBindingDto): Promise<boolean> {
    const t = await PendingCalls.bindingsOf(this.dataSource, toolId);
    return t?.status === 'active' && t.bindings.some((b) => b.bindingId === binding.bindingId && b.health !== 'unhealthy');
  }

  /**
   * The provider called with attempt n's binding; what came back. The provider's progress, where the agent asked for
   * it, is published before the outcome is reported (so before the result is recorded), closed by the attempt's ended
   * notice, which the waiting request hears before it answers: the agent hears every notice first.
   */
  private async attempt(d: Dispatch, attempt: number): Promise<AttemptOutcome> {
    const binding = d.bindings[attempt - 1]!;
    const progress = d.progress ? this.progressOf(d.intentId, attempt) : undefined;
    let release: (() => void) | undefined;
    try {
      if (!(await this.bindingStillServes(d.toolId, binding))) return { kind: 'withdrawn' };
      release = await this.slots.acquire(binding.providerId, d.deadlineAt.getTime());
      if (!release) {
        logger.warn({ intentId: d.intentId, providerId: binding.providerId, inUse: this.slots.inUse(binding.providerId) }, 'the provider stayed at its concurrency bound until the deadline; the call was not sent');
        return { kind: 'failed', failure: 'not_sent', detail: 'the provider was busy with other calls until the deadline; the call was not sent' };
      }
      return await this.callProvider(d, binding, attempt, progress);
    } finally {
      release?.();
      if (progress) await Promise.race([progress.end(), new Promise((r) => setTimeout(r, PROGRESS_FLUSH_MS).unref())]);
    }
  }

  private async callProvider(d: Dispatch, binding: ToolBindingDto, attempt: number, progress: ProgressRelay | undefined): Promise<AttemptOutcome> {
    let raw;
    try {
      raw = await callUpstreamTool({
        target: upstreamTarget(binding), scope: { ...d.authority, serverName: binding.providerId }, toolName: binding.upstreamToolName, arguments: d.arguments,
        deadlineAt: d.deadlineAt.getTime(), intentId: d.intentId, operationKey: d.operationKey, ...(progress ? { onProgress: progress.listen } : {}),
      });
    } catch (error) {
      const failure = error instanceof UpstreamError ? error.kind : 'connection';
      const detail = error instanceof UpstreamError ? error.message : 'the upstream call failed';
      if (mayFallBack(failure, d.kind)) {
        logger.warn({ intentId: d.intentId, providerId: binding.providerId, failure, last: attempt === d.bindings.length }, 'the provider performed nothing');
        const required = error instanceof UpstreamError ? error.requiredCapabilities : undefined;
        return { kind: 'failed', failure, detail, ...(required ? { requiredCapabilities: required } : {}) };
      }
      logger.warn({ intentId: d.intentId, providerId: binding.providerId, failure }, 'outcome unknown after dispatch: reconciling by operation key');
      return { kind: 'unknown', reason: failure === 'deadline' ? 'deadline_passed' : 'connection_lost', detail };
    }
    // A metered call's usage report travels with the result (the provider's _meta itself never reaches the agent).
    const overrides = takeSettlementOverrides(d.intentId);
    return this.checked(d, binding, toResult(raw), d.metered && usageReportOf(raw, d.metered, overrides));
  }

  /** The provider's progress, relayed to the agent (at most once each: a lost notice is only a notice). */
  private progressOf(intentId: string, attempt: number): ProgressRelay {
    return relayProgress(intentId, attempt, (p) => this.outbox.publishNow(CallProgressed, p),
      (err) => logger.debug({ err, intentId }, 'a progress notice was not published'));
  }

  /** A result: withheld when too large (R6), else checked (output contract, or a write's read-back). */
  private async checked(d: Dispatch, binding: ToolBindingDto, upstream: UpstreamResultDto, usage?: UsageReport): Promise<AttemptOutcome> {
    const bytes = Buffer.byteLength(JSON.stringify(upstream), 'utf8');
    if (bytes > MAX_RESULT_BYTES) return { kind: 'too_large', upstream, bytes, limit: MAX_RESULT_BYTES };
    const verdict = checkResult(upstream, d.outputSchema);
    // C4: a write that declares a read-back is confirmed only by reading the resource back by its key.
    const readBack = !verdict.rejection && d.kind === 'write' && d.readBack ? await this.readBack(d, binding) : undefined;
    return { kind: 'received', upstream, verdict, ...(readBack ? { readBack } : {}), ...(usage ? { usage } : {}) };
  }

  /** Reads a write's resource back through the declared read-back tool, by operation key. */
  readBack(d: Pick<Dispatch, 'intentId' | 'operationKey' | 'readBack' | 'authority'>, binding: ToolBindingDto): Promise<ReadBackOutcome> {
    return readBackResource(d, binding);
  }
}
