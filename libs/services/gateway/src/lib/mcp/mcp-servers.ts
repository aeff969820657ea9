import { Injectable } from '@nestjs/common';
import { CLIENT_CAPABILITIES_META_KEY, ProtocolError, Server } from '@modelcontextprotocol/server';
import { mppVerificationFailedOf } from './mpp-binding';
import { agentErrorResult } from '@tollgate/contracts';
import { createLogger } from '@tollgate/observability';
import { POLICY_TOOL_NAMES, POLICY_TOOLS } from '@tollgate/policy-tools';
import { AccessPolicyService, type PolicyInForce } from '../access-policy/access-policy.service';
import { PolicyToolsHost } from '../access-policy/policy-tools.host';
import { type CallerIdentity } from '../authenticate/authenticate.usecase';
import { declaresTasks } from '../call-tasks/call-task';
import { TASKS_EXTENSION } from '../call-tool/tasks-extension';
import { CallTasksUseCase } from '../call-tasks/call-tasks.usecase';
import { type UrlProfile } from '../catalog/catalog-access';
import { type CallOptions, CallToolUseCase } from '../call-tool/call-tool.usecase';
import { GetToolUseCase } from '../get-tool/get-tool.usecase';
import { GATEWAY } from '../gateway.constants';
import { CALL_TOOL_INPUT, checkArguments, HOSTED_TOOLS, invalidArguments } from '../hosted-tools/hosted-tools';
import { ListToolsUseCase } from '../list-tools/list-tools.usecase';
import { RateLimits } from '../rate-limit/rate-limits.service';
import { SearchToolsUseCase } from '../search-tools/search-tools.usecase';
import { approvalAsInput } from './approval-input';
import { measuredCall } from './call-metrics';
import { progressNotifier } from './progress-notifier';

const logger = createLogger(GATEWAY);

/** JSON-RPC error code for a rate-limited tools/list (G9). */
export const JSONRPC_RATE_LIMITED = -32029;

/**
 * How long a client may reuse a `tools/list` answer (2026-07-28 caching hints). The list depends on the credential
 * (URL scope, access policy), so it is `private`; short, because prices and the catalog change under it and a client
 * that holds a stale list only learns on its next call.
 */
export const TOOLS_LIST_TTL_MS = 30_000;

const HOSTED = new Set<string>(HOSTED_TOOLS.map((t) => t.name));

/** 2026-07-28's MissingRequiredClientCapability: the request needs a client capability that is not there. */
export const JSONRPC_MISSING_CAPABILITY = -32021;

/**
 * A call the provider refused for want of a client capability the gateway never offers upstream (sampling, elicitation,
 * roots: an upstream cannot turn a paid call into an interaction) is, to a 2026-07-28 agent, the revision's own answer:
 * -32021 naming the capabilities (HTTP 400), with the call's intentId — nothing was performed or charged. A 2025-era
 * agent gets the same refusal as a tool error (PROVIDER_REQUEST_ERROR with `details.requiredCapabilities`).
 */
export function missingCapabilityOf(result: ToolResult): ProtocolError | undefined {
  const error = result._meta?.['assay/error'] as { code?: string; message?: string; intentId?: string; details?: { requiredCapabilities?: unknown } } | undefined;
  const required = error?.details?.requiredCapabilities;
  if (error?.code !== 'PROVIDER_REQUEST_ERROR' || !required || typeof required !== 'object') return undefined;
  return new ProtocolError(JSONRPC_MISSING_CAPABILITY, error.message ?? 'The provider needs a client capability the gateway does not offer.', { requiredCapabilities: required, intentId: error.intentId });
}

export type ToolResult = { [k: string]: unknown; content: unknown[]; isError?: boolean; _meta?: Record<string, unknown> };

/** Who is calling, settled by the gateway before the SDK sees the request; the per-request server reads it. */
export interface McpCaller {
  identity: CallerIdentity;
  profile: UrlProfile;
  policies: PolicyInForce[];
}

/**
 * The gateway's MCP surface, independent of how requests arrive: the controller serves it over Streamable HTTP (both
 * eras), tests connect to it over the SDK's in-memory transport. The low-level SDK Server is used because catalog
 * tools arrive with JSON Schemas at run time and every refusal must carry the shared error shape (G7), which the
 * high-level McpServer's zod validation would replace with its own text.
 */
@Injectable()
export class McpServers {
  constructor(
    private readonly listTools: ListToolsUseCase,
    private readonly searchTools: SearchToolsUseCase,
    private readonly getTool: GetToolUseCase,
    private readonly callTool: CallToolUseCase,
    private readonly limits: RateLimits,
    private readonly accessPolicy: AccessPolicyService,
    private readonly policyTools: PolicyToolsHost,
    private readonly tasks: CallTasksUseCase,
  ) {}

  /** The caller as the servers see it: the URL's profile narrowed by the access policies in force (G1; never widened). */
  async callerFor(identity: CallerIdentity, urlProfile: UrlProfile): Promise<McpCaller> {
    const policies = await this.accessPolicy.inForce(identity.ownerId, identity.mcpUrlId);
    const profile: UrlProfile = policies.length > 0 ? { ...urlProfile, allowTool: (n) => this.accessPolicy.toolAllowed(policies, n) } : urlProfile;
    return { identity, profile, policies };
  }

  /** The per-request low-level server of one era, for one authenticated caller: every agent-facing behaviour is here once. */
  build({ identity: caller, profile, policies }: McpCaller, era: 'modern' | 'legacy'): Server {
    // List changes reach only 2026-07-28 clients (on subscriptions/listen); a stateless 2025-era URL has no stream to carry them.
    const server = new Server(
      { name: 'tollgate', version: '0.1.0' },
      { capabilities: era === 'modern' ? { tools: { listChanged: true }, extensions: { [TASKS_EXTENSION]: {} } } : { tools: {} }, cacheHints: { 'tools/list': { ttlMs: TOOLS_LIST_TTL_MS, cacheScope: 'private' } } },
    );
    server.setRequestHandler('tools/list', async () => {
      const limited = await this.limits.consume('list', `${caller.credentialId}:${caller.mcpUrlId}`);
      if (!limited.ok) {
        throw new ProtocolError(JSONRPC_RATE_LIMITED, 'tools/list is limited to 60 requests per minute per credential and URL.', { retryAfterMs: limited.retryAfterMs });
      }
      const listed = this.listTools.execute(profile);
      // The self-verification tools sit beside the hosted ones in search mode, where the gateway has a policy root.
      const extra = listed.mode === 'search' && this.policyTools.enabled ? POLICY_TOOLS.map((t) => ({ ...t, inputSchema: t.inputSchema as never })) : [];
      return { tools: [...listed.tools, ...extra] };
    });
    server.setRequestHandler('tools/call', async (req, ctx) => {
      const { name, arguments: args, _meta } = req.params;
      try {
        if (POLICY_TOOL_NAMES.has(name) && this.policyTools.enabled) return (await this.policyTools.call(caller.ownerId, name, args)) as never;
        // The 2026-07-28 envelope (client capabilities) and a retry's answers reach the handler through the context.
        const request = ctx.mcpReq as { envelope?: Record<string, unknown>; inputResponses?: Record<string, unknown> };
        const envelope = request.envelope ?? {};
        const tasks = era === 'modern' && declaresTasks(envelope[CLIENT_CAPABILITIES_META_KEY]);
        // The agent's progressToken: the provider's progress reaches this request as notifications/progress.
        const onProgress = progressNotifier(_meta?.progressToken, (n) => ctx.mcpReq.notify(n));
        const result = await this.callWithRejectionLimit(caller, () => this.dispatch(caller, profile, name, args, { meta: (_meta ?? {}) as Record<string, unknown>, policies, call: { onProgress, tasks } }));
        const refusedPayment = mppVerificationFailedOf(result, _meta);
        if (refusedPayment) throw refusedPayment;
        if (era === 'legacy') return result as never;
        const missing = missingCapabilityOf(result);
        if (missing) throw missing;
        const answered = approvalAsInput(result, envelope, request.inputResponses) as ToolResult;
        return (tasks ? await this.asTask(caller, answered) : answered) as never;
      } catch (err) {
        if (err instanceof ProtocolError) throw err;
        logger.error({ err, tool: name }, 'tool call failed inside the gateway');
        return agentErrorResult({ code: 'INTERNAL_SERVER_ERROR', retryable: true, message: 'The gateway failed unexpectedly. Retry with the same operation key.' }) as never;
      }
    });
    return server;
  }

  /**
   * A call still running when the wait ends becomes a task for a client that declared the tasks extension: the
   * CreateTaskResult names the call's intentId (its task), durable since CallRequested was committed.
   */
  private async asTask(caller: CallerIdentity, result: ToolResult): Promise<ToolResult | Record<string, unknown>> {
    const error = result._meta?.['assay/error'] as { code?: string; intentId?: string } | undefined;
    if (error?.code !== 'IDEMPOTENCY_IN_PROGRESS' || !error.intentId) return result;
    const task = await this.tasks.get(caller, error.intentId);
    if (!task) return result;
    if (task.result) return task.result;
    // CreateTaskResult is the task's state alone: a failure's error is read with tasks/get.
    const { result: _none, error: _unread, ...created } = task;
    return { resultType: 'task', ...created };
  }

  /** G9: at most 60 refused calls per agent per minute; past that every call is RATE_LIMITED until the next minute. */
  async callWithRejectionLimit(caller: CallerIdentity, run: () => Promise<ToolResult>): Promise<ToolResult> {
    const blocked = await this.limits.exhausted('rejected', caller.agentId);
    if (!blocked.ok) {
      return agentErrorResult({ code: 'RATE_LIMITED', retryable: true, retryAfterMs: blocked.retryAfterMs, message: 'Too many refused calls this minute. Wait, then fix the calls before retrying.' });
    }
    const result = await run();
    // A refusal counts; a replay of a stored answer or "still running" is not a new refusal.
    const code = (result._meta?.['assay/error'] as { code?: string } | undefined)?.code;
    if (code && code !== 'IDEMPOTENCY_IN_PROGRESS' && !result._meta?.['assay/replayed']) await this.limits.consume('rejected', caller.agentId);
    return result;
  }

  private async dispatch(
    caller: CallerIdentity, profile: UrlProfile, name: string, args: Record<string, unknown> | undefined,
    { meta, policies, call }: { meta: Record<string, unknown>; policies: PolicyInForce[]; call: CallOptions },
  ): Promise<ToolResult> {
    // Hostile input was refused at the edge (refuseAtEdge), before the SDK, the database or a provider saw it.
    switch (name) {
      case 'search_tools':
        return this.searchTools.execute(caller, profile, args ?? {});
      case 'get_tool':
        return this.getTool.execute(caller, profile, args ?? {});
      case 'call_tool': {
        const bad = checkArguments(CALL_TOOL_INPUT, args ?? {});
        if (bad) return bad;
        const inner = args as { name: string; arguments?: Record<string, unknown> };
        if (HOSTED.has(inner.name)) return invalidArguments([{ field: 'name', problem: 'must be a catalog tool; call discovery tools directly' }]);
        return measuredCall(this.callTool.execute({ caller, profile, name: inner.name, args: inner.arguments ?? {}, meta, policies, ...call }));
      }
      default:
        return measuredCall(this.callTool.execute({ caller, profile, name, args: args ?? {}, meta, policies, ...call }));
    }
  }}
