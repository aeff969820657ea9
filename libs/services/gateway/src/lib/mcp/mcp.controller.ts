import { All, Controller, type OnModuleDestroy, type OnModuleInit, Param, Post, Req, Res } from '@nestjs/common';
import { type AuthInfo, CLIENT_CAPABILITIES_META_KEY, ProtocolError, Server } from '@modelcontextprotocol/server';
import { type Request, type Response } from 'express';
import { agentErrorResult } from '@tollgate/contracts';
import { createLogger } from '@tollgate/observability';
import { POLICY_TOOL_NAMES, POLICY_TOOLS } from '@tollgate/policy-tools';
import { AccessPolicyService, type PolicyInForce } from '../access-policy/access-policy.service';
import { PolicyToolsHost } from '../access-policy/policy-tools.host';
import { AuthenticateUseCase, type CallerIdentity } from '../authenticate/authenticate.usecase';
import { invalidParams } from './invalid-params';
import { approvalAsInput } from './approval-input';
import { taskRequestOf, type TaskRequest } from './task-request';
import { declaresTasks, TASKS_EXTENSION } from '../call-tasks/call-task';
import { CallTasksUseCase } from '../call-tasks/call-tasks.usecase';
import { bothEras, type EraHandler } from './both-eras';
import { type EdgeRefusal, refuseAtEdge } from './edge-input';
import { type UrlProfile } from '../catalog/catalog-access';
import { CatalogIndex } from '../catalog/catalog-index.service';
import { CallToolUseCase } from '../call-tool/call-tool.usecase';
import { measuredCall } from './call-metrics';
import { GetToolUseCase } from '../get-tool/get-tool.usecase';
import { GATEWAY } from '../gateway.constants';
import { CALL_TOOL_INPUT, checkArguments, HOSTED_TOOLS, invalidArguments } from '../hosted-tools/hosted-tools';
import { ListToolsUseCase } from '../list-tools/list-tools.usecase';
import { RateLimits } from '../rate-limit/rate-limits.service';
import { SearchToolsUseCase } from '../search-tools/search-tools.usecase';

const logger = createLogger(GATEWAY);

/** JSON-RPC error code for a rate-limited tools/list (G9). */
export const JSONRPC_RATE_LIMITED = -32029;

const AUTH_FAILURES = {
  MCP_URL_NOT_FOUND: { status: 404, message: 'No MCP server at this URL' },
  MCP_CREDENTIAL_INVALID: { status: 401, message: 'The credential is missing, malformed, revoked or unknown. Sign in again for this profile.' },
  MCP_AUTH_RATE_LIMITED: { status: 429, message: 'Too many failed credential attempts. Fix the sign-in, then wait before retrying.' },
} as const;

const HOSTED = new Set<string>(HOSTED_TOOLS.map((t) => t.name));

type ToolResult = { [k: string]: unknown; content: unknown[]; isError?: boolean; _meta?: Record<string, unknown> };

/** Who is calling, settled by the gateway before the SDK sees the request; the per-request server reads it. */
interface McpCaller {
  identity: CallerIdentity;
  profile: UrlProfile;
  policies: PolicyInForce[];
}

/**
 * How long a client may reuse a `tools/list` answer (2026-07-28 caching hints). The list depends on the credential
 * (URL scope, access policy), so it is `private`; short, because prices and the catalog change under it and a client
 * that holds a stale list only learns on its next call.
 */
export const TOOLS_LIST_TTL_MS = 30_000;

/**
 * The agents' MCP endpoint: `/mcp/<slug>`, Streamable HTTP, stateless (a
 * fresh server per request, so any gateway instance can answer any request).
 * Both protocol eras on the same URL (issue 20): 2026-07-28 requests (per-request
 * `_meta`, `server/discover`, `Mcp-Method` header checks) and 2025-era ones
 * (`initialize`, then requests), see `both-eras.ts`.
 * Identity comes only from the bearer credential and the URL. The low-level
 * SDK Server is used because catalog tools arrive with JSON Schemas at run
 * time and every refusal must carry the shared error shape (G7), which the
 * high-level McpServer's zod validation would replace with its own text.
 */
@Controller('mcp')
export class McpController implements OnModuleInit, OnModuleDestroy {
  private stopNotifying?: () => void;
  private readonly serve: EraHandler = bothEras((authInfo, era) => this.buildServer(callerOf(authInfo), era), (err) => logger.warn({ err }, 'MCP request refused by the protocol layer'));

  constructor(
    private readonly authenticate: AuthenticateUseCase,
    private readonly listTools: ListToolsUseCase,
    private readonly searchTools: SearchToolsUseCase,
    private readonly getTool: GetToolUseCase,
    private readonly callTool: CallToolUseCase,
    private readonly limits: RateLimits,
    private readonly accessPolicy: AccessPolicyService,
    private readonly policyTools: PolicyToolsHost,
    private readonly catalog: CatalogIndex,
    private readonly tasks: CallTasksUseCase,
  ) {}

  /** 2026-07-28 clients hear of catalog changes on `subscriptions/listen`; every replica follows the catalog itself, so any replica can hold the stream. */
  onModuleInit(): void {
    this.stopNotifying = this.catalog.onChange(() => this.serve.toolsChanged());
  }

  @Post(':slug')
  async post(@Param('slug') slug: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    // req.ip: the socket's peer, or the address a trusted proxy (GATEWAY_TRUSTED_PROXIES) forwarded — never a header anyone can set.
    const auth = await this.authenticate.execute(slug, req.headers.authorization, req.ip ?? req.socket.remoteAddress ?? 'unknown');
    if (!auth.ok) {
      const f = AUTH_FAILURES[auth.code];
      if (auth.code === 'MCP_CREDENTIAL_INVALID') res.setHeader('WWW-Authenticate', 'Bearer');
      const retry = 'retryAfterMs' in auth ? auth.retryAfterMs : undefined;
      if (retry !== undefined) res.setHeader('Retry-After', String(Math.ceil(retry / 1000)));
      res.status(f.status).json({ jsonrpc: '2.0', id: null, error: { code: -32001, message: f.message, data: { code: auth.code, ...(retry !== undefined ? { retryAfterMs: retry } : {}) } } });
      return;
    }
    const edge = refuseAtEdge(req.body);
    if (edge) {
      await this.refuseBeforeTheProtocol(auth.identity, edge, res);
      return;
    }
    const task = taskRequestOf(req.body, req.headers);
    if (task) {
      await this.answerTask(auth.identity, task, res);
      return;
    }
    const invalid = invalidParams(req.body);
    if (invalid) {
      res.status(200).json({ jsonrpc: '2.0', id: invalid.id, error: { code: -32602, message: 'Invalid params', data: { problems: invalid.problems } } });
      return;
    }
    const policies = await this.accessPolicy.inForce(auth.identity.ownerId, auth.identity.mcpUrlId);
    // The access policy's tool filter narrows what this caller sees and may call (G1); it never widens the URL's scope.
    const profile: UrlProfile = policies.length > 0 ? { ...auth.profile, allowTool: (n) => this.accessPolicy.toolAllowed(policies, n) } : auth.profile;
    const caller: McpCaller = { identity: auth.identity, profile, policies };
    (req as Request & { auth?: AuthInfo }).auth = { token: auth.identity.credentialId, clientId: auth.identity.agentId, scopes: [], extra: { caller } };
    try {
      await this.serve.node(req, res, req.body);
    } catch (err) {
      logger.error({ err }, 'MCP request failed');
      if (!res.headersSent) res.status(500).json({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } });
    }
  }

  /** Input the SDK must never parse: a refused call (counted, G9) or an invalid request (issue 12). */
  private async refuseBeforeTheProtocol(caller: CallerIdentity, edge: EdgeRefusal, res: Response): Promise<void> {
    if (edge.kind === 'params') {
      res.status(200).json({ jsonrpc: '2.0', id: edge.id, error: { code: -32602, message: 'Invalid params', data: { problems: [edge.problem] } } });
      return;
    }
    const result = await this.callWithRejectionLimit(caller, async () => invalidArguments([edge.problem]));
    res.status(200).json({ jsonrpc: '2.0', id: edge.id, result: edge.modern ? { ...result, resultType: 'complete' } : result });
  }

  /** tasks/get, tasks/cancel and tasks/update of the tasks extension (2026-07-28), on the caller's own calls. */
  private async answerTask(caller: CallerIdentity, task: TaskRequest, res: Response): Promise<void> {
    const reply = (status: number, body: Record<string, unknown>) => void res.status(status).json({ jsonrpc: '2.0', id: task.id, ...body });
    if (!task.ok) return reply(task.status, { error: task.error });
    const unknown = () => reply(200, { error: { code: -32602, message: 'Failed to retrieve task: Task not found', data: { taskId: task.taskId } } });
    if (task.method === 'tasks/cancel') {
      const cancelled = await this.tasks.cancel(caller, task.taskId);
      if (cancelled.outcome === 'unknown') return unknown();
      if (cancelled.outcome === 'refused') return reply(200, { error: { code: -32602, message: `The task cannot be cancelled: ${cancelled.reason}`, data: { taskId: task.taskId } } });
      return reply(200, { result: { resultType: 'complete' } });
    }
    const found = await this.tasks.get(caller, task.taskId);
    if (!found) return unknown();
    // A call never asks for input mid-task, so tasks/update has nothing outstanding: acknowledged and ignored.
    return reply(200, { result: task.method === 'tasks/get' ? { resultType: 'complete', ...found } : { resultType: 'complete' } });
  }

  async onModuleDestroy(): Promise<void> {
    this.stopNotifying?.();
    await this.serve.close();
  }

  /** Stateless: no server-initiated stream and no session to delete. */
  @All(':slug')
  other(@Res() res: Response): void {
    res.setHeader('Allow', 'POST');
    res.status(405).json({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Method not allowed.' } });
  }

  private buildServer({ identity: caller, profile, policies }: McpCaller, era: 'modern' | 'legacy'): Server {
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
        const result = await this.callWithRejectionLimit(caller, () => this.dispatch(caller, profile, name, args, (_meta ?? {}) as Record<string, unknown>, policies));
        if (era === 'legacy') return result as never;
        // The 2026-07-28 envelope (client capabilities) and a retry's answers reach the handler through the context.
        const request = ctx.mcpReq as { envelope?: Record<string, unknown>; inputResponses?: Record<string, unknown> };
        const envelope = request.envelope ?? {};
        const answered = approvalAsInput(result, envelope, request.inputResponses) as ToolResult;
        return (declaresTasks(envelope[CLIENT_CAPABILITIES_META_KEY]) ? await this.asTask(caller, answered) : answered) as never;
      } catch (err) {
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
    const { result: _none, ...created } = task;
    return { resultType: 'task', ...created };
  }

  /** G9: at most 60 refused calls per agent per minute; past that every call is RATE_LIMITED until the next minute. */
  private async callWithRejectionLimit(caller: CallerIdentity, run: () => Promise<ToolResult>): Promise<ToolResult> {
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
    caller: CallerIdentity, profile: UrlProfile, name: string, args: Record<string, unknown> | undefined, meta: Record<string, unknown>, policies: PolicyInForce[],
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
        return measuredCall(this.callTool.execute(caller, profile, inner.name, inner.arguments ?? {}, meta, policies));
      }
      default:
        return measuredCall(this.callTool.execute(caller, profile, name, args ?? {}, meta, policies));
    }
  }
}

/** The caller the controller attached to the request (never anything the client sent). */
function callerOf(authInfo: AuthInfo | undefined): McpCaller {
  const caller = authInfo?.extra?.['caller'] as McpCaller | undefined;
  if (!caller) throw new Error('an MCP request reached the server without an authenticated caller');
  return caller;
}
