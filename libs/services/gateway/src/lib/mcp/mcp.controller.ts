import { All, Controller, Inject, type OnModuleDestroy, type OnModuleInit, Param, Post, Req, Res } from '@nestjs/common';
import { type AuthInfo } from '@modelcontextprotocol/server';
import { type Request, type Response } from 'express';
import { createLogger } from '@tollgate/observability';
import { AuthenticateUseCase, type CallerIdentity } from '../authenticate/authenticate.usecase';
import { CallTasksUseCase } from '../call-tasks/call-tasks.usecase';
import { isAccessible } from '../catalog/catalog-access';
import { CatalogIndex } from '../catalog/catalog-index.service';
import { GATEWAY, GATEWAY_OPTIONS } from '../gateway.constants';
import { type GatewayOptions } from '../gateway.options';
import { MCP_SCOPE } from '../oauth/oauth-provider';
import { baseOf, resourceMetadataUrl } from '../oauth/oauth-routes';
import { invalidArguments } from '../hosted-tools/hosted-tools';
import { bothEras, type EraHandler } from './both-eras';
import { type EdgeRefusal, refuseAtEdge } from './edge-input';
import { invalidParams } from './invalid-params';
import { type McpCaller, McpServers } from './mcp-servers';
import { HEADER_MISMATCH, paramHeaderMismatch } from './param-headers';
import { moveCredentialToMeta, PAYMENT_AUTHORIZATION_HEADER } from './payment-authorization';
import { taskRequestOf, type TaskRequest } from './task-request';

const logger = createLogger(GATEWAY);

const AUTH_FAILURES = {
  MCP_URL_NOT_FOUND: { status: 404, message: 'No MCP server at this URL' },
  MCP_CREDENTIAL_INVALID: { status: 401, message: 'The credential is missing, malformed, revoked or unknown. Sign in again for this profile.' },
  MCP_AUTH_RATE_LIMITED: { status: 429, message: 'Too many failed credential attempts. Fix the sign-in, then wait before retrying.' },
} as const;

/**
 * The agents' MCP endpoint: `/mcp/<slug>`, Streamable HTTP, stateless (a
 * fresh server per request, so any gateway instance can answer any request).
 * Both protocol eras on the same URL: 2026-07-28 requests (per-request
 * `_meta`, `server/discover`, `Mcp-Method` header checks) and 2025-era ones
 * (`initialize`, then requests), see `both-eras.ts`.
 * Identity comes only from the bearer credential and the URL; the servers
 * themselves (what every request is answered with) are `McpServers`.
 */
@Controller('mcp')
export class McpController implements OnModuleInit, OnModuleDestroy {
  private stopNotifying?: () => void;
  private readonly serve: EraHandler = bothEras((authInfo, era) => this.servers.build(callerOf(authInfo), era), refusedByProtocol);

  constructor(
    private readonly authenticate: AuthenticateUseCase,
    private readonly catalog: CatalogIndex,
    private readonly tasks: CallTasksUseCase,
    private readonly servers: McpServers,
    @Inject(GATEWAY_OPTIONS) private readonly options: GatewayOptions,
  ) {}

  /** 2026-07-28 clients hear of catalog changes on `subscriptions/listen`; every replica follows the catalog itself, so any replica can hold the stream. */
  onModuleInit(): void {
    this.stopNotifying = this.catalog.onChange(() => this.serve.toolsChanged());
  }

  /** RFC 9728's challenge: where this URL's protected-resource metadata is (and so its authorization server). */
  private challenge(req: Request, slug: string): string {
    const metadata = resourceMetadataUrl(baseOf(req, this.options.oauth?.publicUrl), slug.toLowerCase());
    return `Bearer resource_metadata="${metadata}", scope="${MCP_SCOPE}"${req.headers.authorization ? ', error="invalid_token"' : ''}`;
  }

  @Post(':slug')
  async post(@Param('slug') slug: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    // req.ip: the socket's peer, or the address a trusted proxy (GATEWAY_TRUSTED_PROXIES) forwarded — never a header anyone can set.
    const auth = await this.authenticate.execute(slug, req.headers.authorization, req.ip ?? req.socket.remoteAddress ?? 'unknown');
    if (!auth.ok) {
      const f = AUTH_FAILURES[auth.code];
      if (auth.code === 'MCP_CREDENTIAL_INVALID') res.setHeader('WWW-Authenticate', this.challenge(req, slug));
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
    const caller = await this.servers.callerFor(auth.identity, auth.profile);
    const mismatch = paramHeaderMismatch(req.body, req.headers, (name) => this.reachableSchema(name, caller));
    if (mismatch) {
      res.status(400).json({ jsonrpc: '2.0', id: mismatch.id, error: { code: HEADER_MISMATCH, message: mismatch.message, data: mismatch.data } });
      return;
    }
    (req as Request & { auth?: AuthInfo }).auth = { token: auth.identity.credentialId, clientId: auth.identity.agentId, scopes: [], extra: { caller } };
    await this.serveMcp(req, res);
  }

  /** The request, past every check, to the SDK (an MPP credential sent in its header moved to the binding's `_meta` first). */
  private async serveMcp(req: Request, res: Response): Promise<void> {
    moveCredentialToMeta(req.body, req.headers[PAYMENT_AUTHORIZATION_HEADER]);
    try {
      await this.serve.node(req, res, req.body);
    } catch (err) {
      logger.error({ err }, 'MCP request failed');
      if (!res.headersSent) res.status(500).json({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } });
    }
  }

  /** The input schema of a catalog tool this caller can reach through its URL (nothing about tools it cannot). */
  private reachableSchema(name: string, caller: McpCaller): unknown {
    const tool = this.catalog.get(name);
    return tool && isAccessible(tool, caller.profile) ? tool.inputSchema : undefined;
  }

  /** Input the SDK must never parse: a refused call (counted, G9) or an invalid request. */
  private async refuseBeforeTheProtocol(caller: CallerIdentity, edge: EdgeRefusal, res: Response): Promise<void> {
    if (edge.kind === 'params') {
      res.status(200).json({ jsonrpc: '2.0', id: edge.id, error: { code: -32602, message: 'Invalid params', data: { problems: [edge.problem] } } });
      return;
    }
    const result = await this.servers.callWithRejectionLimit(caller, async () => invalidArguments([edge.problem]));
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
      // The extension's ack is the same whatever the task's state (idempotent, no task envelope): a cancel that came
      // too late says why in _meta, and tasks/get shows the status the call really reaches.
      if (cancelled.outcome === 'refused') return reply(200, { result: { resultType: 'complete', _meta: { 'assay/cancel': { cancelled: false, reason: cancelled.reason } } } });
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
}

/**
 * The protocol layer refused a request (a bad header, an unknown method, an unsupported revision): an expected
 * refusal, answered to the client in the revision's terms — one line at info with its reason, no stack trace.
 */
function refusedByProtocol(err: Error): void {
  logger.info({ reason: err.message.slice(0, 200), kind: err.name }, 'MCP request refused by the protocol layer');
}

/** The caller the controller attached to the request (never anything the client sent). */
function callerOf(authInfo: AuthInfo | undefined): McpCaller {
  const caller = authInfo?.extra?.['caller'] as McpCaller | undefined;
  if (!caller) throw new Error('an MCP request reached the server without an authenticated caller');
  return caller;
}
