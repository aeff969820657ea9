import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import {
  attemptCount, callEvent, evolve, initialState, isAnswered, mayRetryUnderSameKey, repeatVerdict,
} from '@tollgate/call-life';
import { agentErrorResult, CallRequested, type CallRequestedPayload, digestOf, money } from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { createLogger, withLogContext } from '@tollgate/observability';
import { CatalogIndex } from '../catalog/catalog-index.service';
import { AccessPolicyService } from '../access-policy/access-policy.service';
import { type CallerIdentity } from '../authenticate/authenticate.usecase';
import { type CatalogTool, inScope, noProviderFits, type UrlProfile } from '../catalog/catalog-access';
import { GATEWAY, GATEWAY_OPTIONS, GATEWAY_OUTBOX } from '../gateway.constants';
import { type GatewayOptions } from '../gateway.options';
import { checkCatalogArguments } from '../hosted-tools/hosted-tools';
import { readOperationKey, requestHashOf } from '../operation-key/operation-key';
import { Calls } from '../calls/calls.repository';
import { CatalogTools } from '../sync-catalog/catalog-tools.repository';
import { answerOf, outcomeHeld, type ToolCallResult } from './call-answer';

import { TASKS_EXTENSION } from './tasks-extension';
import { CallWaiters } from './call-waiters.service';
import { ProgressStream } from './progress-stream';
import { paymentsOf } from './payment-meta';
import { type ToolCallRequest } from './tool-call-request';

export { type CallOptions, type ToolCallRequest } from './tool-call-request';

export { type ToolCallResult } from './call-answer';

/** Where an agent puts a signed x402 payment (G7). */

const logger = createLogger(GATEWAY);

/**
 * call_tool (G5) and direct calls (G6) share this path: the gateway records
 * the call and publishes CallRequested in one transaction, then waits for the
 * outcome the other services publish, and answers with the upstream's
 * content unchanged plus a receipt.
 */
@Injectable()
export class CallToolUseCase {
  constructor(
    @InjectDataSource(GATEWAY) private readonly dataSource: DataSource,
    @Inject(GATEWAY_OUTBOX) private readonly outbox: OutboxWriter,
    @Inject(GATEWAY_OPTIONS) private readonly options: GatewayOptions,
    private readonly waiters: CallWaiters,
    private readonly accessPolicy: AccessPolicyService,
    private readonly catalog: CatalogIndex,
  ) {}

  async execute(call: ToolCallRequest): Promise<ToolCallResult> {
    const { caller, profile, name, args, meta = {}, policies = [], onProgress, tasks } = call;
    const read = readOperationKey(meta);
    if (!read.ok) return agentErrorResult({ code: 'MCP_IDEMPOTENCY_KEY_INVALID', retryable: false, message: read.message });
    // The catalog read model in memory (reloaded on every catalog change, here and on the other replicas via NOTIFY);
    // the table only when this instance has not loaded the tool yet.
    const doc = this.catalog.get(name) ?? (await CatalogTools.byName(this.dataSource, name));
    const refused = catalogRefusal(doc, profile, name, args, meta);
    if (refused) return refused;
    // Access policy: decided before any record, hold or dispatch; a refusal leaves no event behind.
    const access = await this.accessPolicy.decide(policies, name, args);
    if (!access.ok) return accessRefusal(access);
    // A payment travels in the request's _meta (x402, or an MPP credential), never in the tool arguments.
    const payments = paymentsOf(meta);
    if (!payments.ok) return payments.refusal;
    const tool = doc!;
    if (tool.taskSupport === 'required' && !tasks) return tasksRequired(name);
    // A tool its provider runs as a task, for an agent that takes tasks: the task is answered at once (no wait), so
    // nothing would hear the provider's progress.
    const waitMs = tasks && tool.taskSupport ? 0 : this.options.callWaitMs;
    const listener = waitMs > 0 ? onProgress : undefined;
    const request = this.requestOf(caller, tool, args, {
      operationKey: read.key, pinned: Object.keys(access.pinned).length > 0 ? access.pinned : undefined, x402Payment: payments.x402Payment, mppCredential: payments.mppCredential, progress: !!listener,
    });
    const intentId = request.intentId;
    const progress = listener ? new ProgressStream(listener) : undefined;
    const unlisten = progress ? this.waiters.listenProgress(intentId, (n) => progress.hear(n)) : undefined;
    try {
      return await withLogContext({ intentId }, () => this.run(caller, request, { decimals: tool.assetDecimals, waitMs, progress }));
    } finally {
      unlisten?.();
    }
  }

  /** The call as CallRequested carries it: identity from the credential, the price and contract from the catalog. */
  private requestOf(
    caller: CallerIdentity, tool: CatalogTool, args: Record<string, unknown>,
    extra: { operationKey?: string; pinned?: CallRequestedPayload['accessPolicy']; x402Payment?: Record<string, unknown>; mppCredential?: Record<string, unknown>; progress: boolean },
  ): CallRequestedPayload {
    return {
      intentId: randomUUID(), ownerId: caller.ownerId, agentId: caller.agentId, mcpUrlId: caller.mcpUrlId, toolId: tool.toolId, toolName: tool.name, contractVersion: tool.version,
      arguments: args, argumentsHash: digestOf(args), price: money(BigInt(tool.price.amountMinor), tool.price.asset),
      deadlineAt: new Date(Date.now() + this.options.callDeadlineMs).toISOString(),
      ...(extra.operationKey !== undefined ? { operationKey: extra.operationKey } : {}),
      ...(extra.pinned ? { accessPolicy: extra.pinned } : {}),
      ...(typeof tool.freeCallsPerDay === 'number' ? { freeCallsPerDay: tool.freeCallsPerDay } : {}),
      ...(extra.x402Payment !== undefined ? { x402Payment: extra.x402Payment } : {}),
      ...(extra.mppCredential !== undefined ? { mppCredential: extra.mppCredential } : {}),
      // Priced by use: `price` above is the most the call may cost (what is held); the charge follows the usage.
      ...(tool.metered ? { metered: tool.metered } : {}),
      ...(extra.progress ? { progress: true } : {}),
    };
  }

  /** Records the call and publishes CallRequested in one transaction, then waits for its answer (or answers a repeat). */
  private async run(caller: CallerIdentity, request: CallRequestedPayload, { decimals, waitMs, progress }: RunOptions): Promise<ToolCallResult> {
    const requestHash = requestHashOf(request.toolId, request.arguments);
    // Listening before the call exists: its answer cannot come before this, so the first read waits for a wake-up.
    const firstWake = this.waiters.next(request.intentId, this.recheckMs(Date.now() + waitMs));
    const created = await this.dataSource.transaction(async (m) => {
      if (request.operationKey !== undefined && !(await this.takeKey(m, caller, request, requestHash))) return false;
      await Calls.insert(m, {
        intent_id: request.intentId, agent_id: caller.agentId, mcp_url_id: caller.mcpUrlId, tool_id: request.toolId, price_minor: request.price.amountMinor,
        asset: request.price.asset, asset_decimals: decimals ?? null, access_policy: (request.accessPolicy as Record<string, unknown> | undefined) ?? null,
        operation_key: request.operationKey ?? null, deadline_at: new Date(request.deadlineAt), life: evolve(initialState(request.intentId), callEvent('CallRequested', request)),
      });
      await this.outbox.append(m, CallRequested, request);
      return true;
    });
    if (!created) return this.repeat(caller, request.operationKey!, requestHash);
    logger.info({ toolId: request.toolId }, 'call requested');
    if (waitMs === 0) return stillRunning(request.intentId);
    const { answer, accessHeld } = await this.awaitOutcome(caller, request.intentId, firstWake, { waitMs, progress });
    return accessHeld ? answer : this.withheld(request.intentId);
  }

  /**
   * The primary key decides which of concurrent requests with this key runs the call (B5): the database, not memory.
   * A key whose call payment refused (nothing held, nothing dispatched) is taken over by a retry with the same request —
   * after a top-up, an owner's approval or with an x402 payment — unless the refusal was final (the model decides).
   */
  private async takeKey(m: EntityManager, caller: CallerIdentity, request: CallRequestedPayload, requestHash: string): Promise<boolean> {
    const key = { agentId: caller.agentId, key: request.operationKey!, toolId: request.toolId, requestHash, intentId: request.intentId };
    if (await Calls.claimKey(m, key)) return true;
    const held = await Calls.lockKey(m, caller.agentId, key.key);
    if (!held || held.request_hash !== requestHash || !mayRetryUnderSameKey(held.life)) return false;
    await Calls.retakeKey(m, caller.agentId, key.key, request.intentId);
    return true;
  }

  private withheld(intentId: string): ToolCallResult {
    return agentErrorResult({
      code: 'MCP_CREDENTIAL_INVALID', retryable: false, intentId,
      message: 'Access was revoked while the call ran; its result is withheld. Sign in again for this profile.',
    });
  }

  /** A request whose operation key is already known: never a second call (B5, C6). */
  private async repeat(caller: CallerIdentity, key: string, requestHash: string): Promise<ToolCallResult> {
    const op = (await Calls.findKey(this.dataSource, caller.agentId, key))!;
    if (op.request_hash !== requestHash) {
      return agentErrorResult({
        code: 'IDEMPOTENCY_KEY_REUSED', retryable: false, intentId: op.intent_id,
        message: 'This operation key already belongs to another tool or other arguments. Check the original operation; reuse a key only for the same tool and arguments.',
        details: { originalToolId: op.tool_id },
      });
    }
    const call = (await Calls.find(this.dataSource, op.intent_id))!;
    switch (repeatVerdict(call.life, { createdAt: call.created_at, answerExpired: call.answer_expired_at !== null }, Date.now())) {
      case 'replay': {
        const stored = answerOf(call);
        return { ...stored, _meta: { ...stored._meta, 'assay/replayed': true } };
      }
      case 'in_progress':
        if (call.outcome_parked) return outcomeHeld(call.intent_id);
        return agentErrorResult({
          code: 'IDEMPOTENCY_IN_PROGRESS', retryable: true, retryAfter: 1, retryAfterMs: 1000, intentId: call.intent_id,
          message: 'The first attempt with this key is still running; this retry was not charged. Wait, then retry with the same key.',
        });
      case 'stalled':
        return agentErrorResult({
          code: 'IDEMPOTENCY_ATTEMPT_STALLED', retryable: false, intentId: call.intent_id,
          message: 'The provider did not confirm the outcome of this call; it is being reconciled by its key. Do not buy it again under a new key; retry this key later for the verdict.',
        });
      case 'unavailable':
        return agentErrorResult({
          code: 'IDEMPOTENCY_RESULT_UNAVAILABLE', retryable: false, intentId: call.intent_id,
          message: 'The response of this operation is no longer kept. Reconcile the existing call before another purchase.',
        });
    }
  }

  /** How long to wait for a wake-up before reading again anyway (a fallback: NOTIFY wakes the request). */
  private recheckMs(deadline: number): number {
    return Math.max(1, Math.min(deadline - Date.now(), this.options.callRecheckMs ?? 2000));
  }

  /**
   * Waits for the call's answer: woken by NOTIFY from whichever replica records it (or the in-process hand-off), each
   * read also says whether the caller still has access (R7). `woken` was registered before the call was committed.
   */
  private async awaitOutcome(
    caller: CallerIdentity, intentId: string, woken: Promise<void>, { waitMs, progress }: Omit<RunOptions, 'decimals'>,
  ): Promise<{ answer: ToolCallResult; accessHeld: boolean }> {
    const deadline = Date.now() + waitMs;
    for (;;) {
      await woken;
      // Listen before reading: a wake-up that lands between the read and the wait is not lost.
      woken = this.waiters.next(intentId, this.recheckMs(deadline));
      // Stopping: the database may be refusing sessions already — then the request answers "still running" (no result
      // in it, so nothing to withhold).
      const call = await Calls.findForCaller(this.dataSource, intentId, caller.credentialId, caller.mcpUrlId).catch((err: unknown) => {
        if (this.waiters.stopping) return null;
        throw err;
      });
      if (call === null) return { answer: stillRunning(intentId), accessHeld: true };
      const accessHeld = call?.access_held === true;
      if (call && isAnswered(call.life)) {
        // The agent hears the provider's progress before the result: the answering attempt's notices are all in.
        if (progress && !this.waiters.stopping) await progress.endOf(attemptCount(call.life));
        return { answer: answerOf(call), accessHeld };
      }
      if (call?.outcome_parked) return { answer: outcomeHeld(intentId), accessHeld };
      if (deadline - Date.now() <= 0 || this.waiters.stopping) return { answer: stillRunning(intentId), accessHeld };
    }
  }
}

/** A tool its provider runs only as a task, for an agent that takes none: refused before anything is recorded. */
function tasksRequired(name: string): ToolCallResult {
  return agentErrorResult({
    code: 'PROVIDER_REQUEST_ERROR', retryable: false, message: `"${name}" runs only as a task: declare the ${TASKS_EXTENSION} extension and call it again. Nothing was charged.`,
    details: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  });
}

interface RunOptions {
  decimals: number | undefined;
  waitMs: number;
  /** The provider's progress, where the agent asked for it. */
  progress?: ProgressStream;
}


/** The answer of a call whose outcome is not recorded yet: retry with the same operation key, never charged twice. */
function stillRunning(intentId: string): ToolCallResult {
  return agentErrorResult({
    code: 'IDEMPOTENCY_IN_PROGRESS', retryable: true, retryAfterMs: 1000, intentId,
    message: 'The call is still running; it has not been charged twice. Check it again later.',
  });
}

/** The catalog's refusals, before anything is recorded or charged: scope, removal, retired version, provider rules, R4. */
function catalogRefusal(doc: CatalogTool | undefined, profile: UrlProfile, name: string, args: Record<string, unknown>, meta: Record<string, unknown>): ToolCallResult | undefined {
  if (!doc || !inScope(doc, profile)) {
    return agentErrorResult({ code: 'TOOL_NOT_IN_TOOLSET', retryable: false, message: `No tool named "${name}" is available through this URL. Use search_tools to find one.` });
  }
  if (doc.status === 'removed' || doc.bindings.length === 0) {
    return agentErrorResult({ code: 'TOOL_REMOVED', retryable: false, message: `The tool "${name}" is no longer offered by any provider. Search for another.`, details: { name, lastVersion: doc.version } });
  }
  const pinnedVersion = meta['assay/contractVersion'];
  if (typeof pinnedVersion === 'number' && doc.retiredVersions.includes(pinnedVersion)) {
    return agentErrorResult({
      code: 'CONTRACT_VERSION_RETIRED', retryable: false, message: `Version ${pinnedVersion} of "${name}" is retired; version ${doc.version} is in force. Read it with get_tool.`,
      details: { name, requestedVersion: pinnedVersion, currentVersion: doc.version },
    });
  }
  if (profile.providerRules && noProviderFits(doc, profile)) {
    return agentErrorResult({ code: 'NO_PROVIDER_MATCHES_RULES', retryable: false, message: `No provider of "${name}" is allowed by this URL's provider rules.`, details: { name } });
  }
  // R4: the approved contract's input schema, no coercion.
  return checkCatalogArguments(doc.contractHash, doc.inputSchema, name, args) ?? unsupportedInput(doc, name, args);
}

/** An optional input that no healthy provider's listed contract declares cannot be honoured anywhere. */
function unsupportedInput(doc: CatalogTool, name: string, args: Record<string, unknown>): ToolCallResult | undefined {
  const unsupported = Object.keys(args).find((field) => doc.optionalInputFields.includes(field)
    && !doc.bindings.some((b) => b.health === 'healthy' && (b.inputProperties === undefined || b.inputProperties.includes(field))));
  if (!unsupported) return undefined;
  return agentErrorResult({
    code: 'UNSUPPORTED_INPUT_FIELD', retryable: false, message: `No available provider of "${name}" supports the optional input "${unsupported}"; remove it if the call can do without.`,
    details: { field: unsupported, providers: doc.bindings.map((b) => b.providerId) },
  });
}

type AccessRefused = Extract<Awaited<ReturnType<AccessPolicyService['decide']>>, { ok: false }>;

function accessRefusal(access: AccessRefused): ToolCallResult {
  if (access.code === 'TOOL_NOT_ALLOWED') {
    return agentErrorResult({
      code: 'TOOL_NOT_ALLOWED', retryable: false, message: `${access.message} Check this agent's access policy.`,
      details: { rule: access.rule, policy: access.subject, policyVersion: access.version },
    });
  }
  return agentErrorResult({
    code: 'TOOL_ARGUMENTS_INVALID', retryable: false,
    message: `The access policy refuses these arguments: ${access.violations.map((v) => v.suggestion).join('; ')}.`,
    details: { policy: access.subject, policyVersion: access.version, violations: access.violations, suggestedFix: access.suggestedFix },
  });
}
