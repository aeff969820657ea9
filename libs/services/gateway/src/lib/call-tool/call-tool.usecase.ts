import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { agentErrorResult, type AgentErrorCode, CallRequested, digestOf, displayAmount, isAgentErrorCode, money } from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { returnedRows } from '@tollgate/persistence';
import { createLogger, withLogContext } from '@tollgate/observability';
import { CatalogIndex } from '../catalog/catalog-index.service';
import { AccessPolicyService, type PolicyInForce } from '../access-policy/access-policy.service';
import { type CallerIdentity } from '../authenticate/authenticate.usecase';
import { type CatalogTool, inScope, noProviderFits, type UrlProfile } from '../catalog/catalog-access';
import { GATEWAY, GATEWAY_OPTIONS, GATEWAY_OUTBOX } from '../gateway.constants';
import { type GatewayOptions } from '../gateway.options';
import { checkCatalogArguments } from '../hosted-tools/hosted-tools';
import { readOperationKey, repeatVerdict, requestHashOf } from '../operation-key/operation-key';

/** Where an agent puts a signed x402 payment (G7). */
export const X402_PAYMENT_META_KEY = 'x402/payment';
import { CallWaiters } from './call-waiters.service';

interface CallRow {
  intent_id: string;
  created_at: Date;
  deadline_at: Date | null;
  tool_id: string;
  price_minor: string;
  asset: string;
  provider_id: string | null;
  attempts: number;
  classification: string | null;
  result: { content: Record<string, unknown>[]; structuredContent?: Record<string, unknown>; isError?: boolean } | null;
  effect: string | null;
  error: { code: string; message: string; retryable: boolean; stage?: 'payment'; final?: boolean; retryAfterMs?: number; details?: Record<string, unknown>; x402PaymentRequired?: Record<string, unknown> } | null;
  asset_decimals: number | null;
  held_minor: string | null;
  x402_response: Record<string, unknown> | null;
  answer_expired_at: Date | null;
  settlement: string | null;
  result_attempt: number | null;
  effect_attempt: number | null;
}

export interface ToolCallResult {
  [key: string]: unknown;
  content: Record<string, unknown>[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
  _meta?: Record<string, unknown>;
}

const logger = createLogger(GATEWAY);

/** The outcome is known to the agent: refused or failed, or the effect confirmed with the provider's result. */
function isFinished(row: CallRow): boolean {
  // An unknown outcome (IDEMPOTENCY_RESULT_UNAVAILABLE) is an answer too; a later reconciled result replaces it on replay.
  // A confirmed result waits for the payment fact as well: the receipt must show what is held (events of one call
  // travel on several topics, so the effect may be recorded before the hold).
  return (confirmed(row) && (row.held_minor !== null || row.settlement !== null)) || row.error !== null;
}

/** OutcomeUnknown was recorded (execution opened a reconciliation) and neither a verdict nor a settlement followed yet. */
function isReconciling(row: CallRow): boolean {
  return row.error?.code === 'IDEMPOTENCY_RESULT_UNAVAILABLE' && !confirmed(row) && row.settlement === null;
}

/** The confirmed effect and the stored result are those of the same attempt (events of one call arrive on several topics). */
function confirmed(row: CallRow): boolean {
  return row.effect === 'confirmed' && row.result !== null && row.effect_attempt !== null && row.effect_attempt === row.result_attempt;
}

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

  async execute(caller: CallerIdentity, profile: UrlProfile, name: string, args: Record<string, unknown>, meta: Record<string, unknown> = {}, policies: readonly PolicyInForce[] = []): Promise<ToolCallResult> {
    const read = readOperationKey(meta);
    if (!read.ok) return agentErrorResult({ code: 'MCP_IDEMPOTENCY_KEY_INVALID', retryable: false, message: read.message });
    const operationKey = read.key;
    // The catalog read model in memory (reloaded on every catalog change, here and on the other replicas via NOTIFY);
    // the table only when this instance has not loaded the tool yet.
    const doc = this.catalog.get(name)
      ?? ((await this.dataSource.query('SELECT doc FROM gateway.catalog_tool WHERE name = $1', [name])) as { doc: CatalogTool }[])[0]?.doc;
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
    // R4: the approved contract's input schema, no coercion; refused before anything is recorded or charged.
    const badArgs = checkCatalogArguments(doc.contractHash, doc.inputSchema, name, args);
    if (badArgs) return badArgs;
    // An optional input that no healthy provider's listed contract declares cannot be honoured anywhere.
    const unsupported = Object.keys(args).find((field) => doc.optionalInputFields.includes(field)
      && !doc.bindings.some((b) => b.health === 'healthy' && (b.inputProperties === undefined || b.inputProperties.includes(field))));
    if (unsupported) {
      return agentErrorResult({
        code: 'UNSUPPORTED_INPUT_FIELD', retryable: false, message: `No available provider of "${name}" supports the optional input "${unsupported}"; remove it if the call can do without.`,
        details: { field: unsupported, providers: doc.bindings.map((b) => b.providerId) },
      });
    }
    // Access policy (issue 6): decided before any record, hold or dispatch; a refusal leaves no event behind.
    const access = await this.accessPolicy.decide(policies, name, args);
    if (!access.ok && access.code === 'TOOL_NOT_ALLOWED') {
      return agentErrorResult({
        code: 'TOOL_NOT_ALLOWED', retryable: false, message: `${access.message} Check this agent's access policy.`,
        details: { rule: access.rule, policy: access.subject, policyVersion: access.version },
      });
    }
    if (!access.ok) {
      return agentErrorResult({
        code: 'TOOL_ARGUMENTS_INVALID', retryable: false,
        message: `The access policy refuses these arguments: ${access.violations.map((v) => v.suggestion).join('; ')}.`,
        details: { policy: access.subject, policyVersion: access.version, violations: access.violations, suggestedFix: access.suggestedFix },
      });
    }
    const pinned = Object.keys(access.pinned).length > 0 ? access.pinned : undefined;
    const tool = { tool_id: doc.toolId, version: doc.version, price_minor: doc.price.amountMinor, asset: doc.price.asset, decimals: doc.assetDecimals };
    // x402 (G7): a signed payment travels in the request's _meta, beside the operation key, never in the tool arguments.
    const x402Payment = meta[X402_PAYMENT_META_KEY];
    if (x402Payment !== undefined && (typeof x402Payment !== 'object' || x402Payment === null || Array.isArray(x402Payment) || JSON.stringify(x402Payment).length > 16_384)) {
      return agentErrorResult({ code: 'PAYMENT_REQUIRED', retryable: true, message: `_meta["${X402_PAYMENT_META_KEY}"] must be an x402 payment payload object. Sign the payment requirement and send it there.` });
    }
    const intentId = randomUUID();
    const deadlineAt = new Date(Date.now() + this.options.callDeadlineMs);
    return withLogContext({ intentId }, async () => {
      const requestHash = requestHashOf(tool.tool_id, args);
      const created = await this.dataSource.transaction(async (m) => {
        if (operationKey !== undefined) {
          // The primary key decides which of concurrent requests with this key runs the call (B5): the database, not memory.
          const claimed: unknown[] = await m.query(
            `INSERT INTO gateway.operation_key (agent_id, key, tool_id, request_hash, intent_id) VALUES ($1, $2, $3, $4, $5)
             ON CONFLICT (agent_id, key) DO NOTHING RETURNING intent_id`,
            [caller.agentId, operationKey, tool.tool_id, requestHash, intentId],
          );
          if (claimed.length === 0) {
            // A key whose last attempt payment refused (nothing held, nothing dispatched) is free for the retry with the same
            // request: after a top-up, an owner's approval or with an x402 payment, the same key runs the call — unless the
            // refusal is final (payment could not process the call at all: its answer stands for the key).
            const retaken = returnedRows(await m.query(
              `UPDATE gateway.operation_key k SET intent_id = $4 FROM gateway.call c
                WHERE k.agent_id = $1 AND k.key = $2 AND k.request_hash = $3 AND c.intent_id = k.intent_id AND c.error->>'stage' = 'payment' AND c.error->'final' IS NULL
                RETURNING k.intent_id`,
              [caller.agentId, operationKey, requestHash, intentId],
            ));
            if (retaken.length === 0) return false;
          }
        }
        await m.query(
          `INSERT INTO gateway.call (intent_id, agent_id, mcp_url_id, tool_id, price_minor, asset, access_policy, operation_key, deadline_at, asset_decimals)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
          [intentId, caller.agentId, caller.mcpUrlId, tool.tool_id, tool.price_minor, tool.asset, pinned ? JSON.stringify(pinned) : null, operationKey ?? null, deadlineAt, tool.decimals],
        );
        await this.outbox.append(m, CallRequested, {
          intentId,
          ownerId: caller.ownerId,
          agentId: caller.agentId,
          mcpUrlId: caller.mcpUrlId,
          toolId: tool.tool_id,
          toolName: name,
          contractVersion: tool.version,
          arguments: args,
          argumentsHash: digestOf(args),
          price: money(BigInt(tool.price_minor), tool.asset),
          deadlineAt: deadlineAt.toISOString(),
          ...(operationKey !== undefined ? { operationKey } : {}),
          ...(pinned ? { accessPolicy: pinned } : {}),
          ...(typeof doc.freeCallsPerDay === 'number' ? { freeCallsPerDay: doc.freeCallsPerDay } : {}),
          ...(x402Payment !== undefined ? { x402Payment: x402Payment as Record<string, unknown> } : {}),
        });
        return true;
      });
      if (!created) return this.repeat(caller, operationKey as string, requestHash);
      logger.info({ toolId: tool.tool_id }, 'call requested');
      const answer = await this.awaitOutcome(intentId);
      return (await this.accessStillHeld(caller)) ? answer : this.withheld(intentId);
    });
  }

  /** R7: access is checked again after the I/O; a credential or URL revoked meanwhile gets no result. */
  private async accessStillHeld(caller: CallerIdentity): Promise<boolean> {
    const [row]: { ok: boolean }[] = await this.dataSource.query(
      `SELECT (c.revoked_at IS NULL AND u.disabled_at IS NULL) AS ok FROM gateway.credential c, gateway.mcp_url u WHERE c.credential_id = $1 AND u.mcp_url_id = $2`,
      [caller.credentialId, caller.mcpUrlId],
    );
    return row?.ok === true;
  }

  private withheld(intentId: string): ToolCallResult {
    return agentErrorResult({
      code: 'MCP_CREDENTIAL_INVALID', retryable: false, intentId,
      message: 'Access was revoked while the call ran; its result is withheld. Sign in again for this profile.',
    });
  }

  /** A request whose operation key is already known: never a second call (B5, C6). */
  private async repeat(caller: CallerIdentity, key: string, requestHash: string): Promise<ToolCallResult> {
    const [op]: { intent_id: string; tool_id: string; request_hash: string }[] = await this.dataSource.query(
      'SELECT intent_id, tool_id, request_hash FROM gateway.operation_key WHERE agent_id = $1 AND key = $2',
      [caller.agentId, key],
    );
    if (op!.request_hash !== requestHash) {
      return agentErrorResult({
        code: 'IDEMPOTENCY_KEY_REUSED', retryable: false, intentId: op!.intent_id,
        message: 'This operation key already belongs to another tool or other arguments. Check the original operation; reuse a key only for the same tool and arguments.',
        details: { originalToolId: op!.tool_id },
      });
    }
    const [row]: CallRow[] = await this.dataSource.query('SELECT * FROM gateway.call WHERE intent_id = $1', [op!.intent_id]);
    const verdict = repeatVerdict({
      finished: isFinished(row!), reconciling: isReconciling(row!), createdAt: row!.created_at, answerExpired: row!.answer_expired_at !== null,
    }, Date.now());
    switch (verdict) {
      case 'replay': {
        const stored = this.answer(row!);
        return { ...stored, _meta: { ...stored._meta, 'assay/replayed': true } };
      }
      case 'in_progress':
        return agentErrorResult({
          code: 'IDEMPOTENCY_IN_PROGRESS', retryable: true, retryAfter: 1, retryAfterMs: 1000, intentId: row!.intent_id,
          message: 'The first attempt with this key is still running; this retry was not charged. Wait, then retry with the same key.',
        });
      case 'stalled':
        return agentErrorResult({
          code: 'IDEMPOTENCY_ATTEMPT_STALLED', retryable: false, intentId: row!.intent_id,
          message: 'The provider did not confirm the outcome of this call; it is being reconciled by its key. Do not buy it again under a new key; retry this key later for the verdict.',
        });
      case 'unavailable':
        return agentErrorResult({
          code: 'IDEMPOTENCY_RESULT_UNAVAILABLE', retryable: false, intentId: row!.intent_id,
          message: 'The response of this operation is no longer kept. Reconcile the existing call before another purchase.',
        });
    }
  }

  private async awaitOutcome(intentId: string): Promise<ToolCallResult> {
    const deadline = Date.now() + this.options.callWaitMs;
    for (;;) {
      // Listen before reading: a wake-up that lands between the read and the wait is not lost.
      // Woken by NOTIFY from whichever replica records the outcome; the periodic re-read is only a fallback.
      const woken = this.waiters.next(intentId, Math.max(1, Math.min(deadline - Date.now(), this.options.callRecheckMs ?? 2000)));
      const [row]: CallRow[] = await this.dataSource.query('SELECT * FROM gateway.call WHERE intent_id = $1', [intentId]);
      if (row && isFinished(row)) return this.answer(row);
      const left = deadline - Date.now();
      if (left <= 0) {
        return agentErrorResult({
          code: 'IDEMPOTENCY_IN_PROGRESS', retryable: true, retryAfterMs: 1000, intentId,
          message: 'The call is still running; it has not been charged twice. Check it again later.',
        });
      }
      await woken;
    }
  }

  private answer(row: CallRow): ToolCallResult {
    const ok = confirmed(row);
    const decimals = row.asset_decimals ?? 0;
    const amount = (minor: bigint) => ({ asset: row.asset, amountMinor: minor.toString(), display: displayAmount(minor, row.asset, decimals) });
    const held = BigInt(row.held_minor ?? '0');
    // G5.3: VERIFYING while the hold is held, then SETTLED (charged) or REFUNDED (nothing charged). A replay shows the current status.
    const receipt = {
      intentId: row.intent_id,
      status: row.settlement === 'settled' ? 'SETTLED' : row.settlement === 'refunded' ? 'REFUNDED' : 'VERIFYING',
      toolId: row.tool_id,
      providerId: row.provider_id,
      classification: row.classification,
      attempts: row.attempts,
      ...(ok && row.attempts > 1 ? { fellBack: true } : {}),
      held: amount(row.settlement === null ? held : 0n),
      charged: amount(row.settlement === 'settled' ? held : 0n),
    };
    const x402 = row.x402_response ? { 'x402/payment-response': row.x402_response } : {};
    if (!ok && row.error) {
      const { code: rawCode, message, retryable, retryAfterMs, details, x402PaymentRequired } = row.error;
      const code: AgentErrorCode = isAgentErrorCode(rawCode) ? rawCode : 'INTERNAL_SERVER_ERROR';
      const failed = agentErrorResult({
        code, retryable, message, intentId: row.intent_id,
        ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
        ...(details ? { details } : {}),
      });
      // A payment refusal held nothing: there is no receipt, and the x402 requirement (if any) rides beside the error.
      if (row.error.stage === 'payment') {
        return { ...failed, _meta: { ...failed._meta, ...(x402PaymentRequired ? { 'x402/paymentRequired': x402PaymentRequired } : {}) } };
      }
      return { ...failed, _meta: { ...failed._meta, 'assay/receipt': receipt, ...x402 } };
    }
    const result = row.result!;
    return {
      content: result.content,
      ...(result.structuredContent ? { structuredContent: result.structuredContent } : {}),
      ...(result.isError ? { isError: true } : {}),
      _meta: { 'assay/receipt': receipt, ...x402 },
    };
  }
}
