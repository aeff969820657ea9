import { type CallToolResult, Client, StreamableHTTPClientTransport, type Tool, type Transport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { fetchCapturingSettlementOverrides } from './settlement-overrides';
import { upstreamHeaders } from './upstream-credentials';
import { classify, inputRequiredFailure, UpstreamError } from './upstream-failures';
import { UpstreamEras } from './upstream-eras';

/** R6: one upstream operation never runs longer than this, whatever the caller asks. */
export const MAX_OPERATION_MS = 30_000;
/** R6: discovery reads at most this many pages and tools. */
export const MAX_LIST_PAGES = 20;
export const MAX_LIST_TOOLS = 1000;
/** R6: one tool's metadata (its JSON in tools/list) at most this many bytes. */
export const MAX_TOOL_METADATA_BYTES = 64_000;

/** How the platform reaches a provider. Agents never supply this (R1): it comes from discovery's registry. */
export type UpstreamTarget = { transport: 'http'; endpoint: string } | { transport: 'stdio'; command: string; args?: string[] };

export interface UpstreamScope {
  target: UpstreamTarget;
  /** Absolute deadline (epoch ms); clamped to now + 30 s. */
  deadlineAt: number;
  signal?: AbortSignal;
}

function effectiveTimeout(deadlineAt: number): number {
  const ms = Math.min(deadlineAt - Date.now(), MAX_OPERATION_MS);
  if (ms <= 0) throw new UpstreamError('not_sent', 'the deadline passed before the upstream was called');
  return ms;
}

function openTransport(target: UpstreamTarget, signal?: AbortSignal): Transport {
  if (target.transport === 'stdio') {
    // The child gets a minimal environment: the platform's secrets are not the provider's business.
    return new StdioClientTransport({ command: target.command, args: target.args ?? [], stderr: 'ignore', env: { PATH: process.env['PATH'] ?? '' } });
  }
  return new StreamableHTTPClientTransport(new URL(target.endpoint), {
    requestInit: { headers: upstreamHeaders(target.endpoint), ...(signal ? { signal } : {}) }, fetch: fetchCapturingSettlementOverrides(),
  });
}

function newClient(): Client {
  // No sampling or elicitation capability: an upstream cannot turn a call into an interaction (R4). Both eras:
  // 2026-07-28 first (server/discover), the 2025 handshake for a provider that does not offer it.
  return new Client({ name: 'tollgate', version: '0.1.0' }, { capabilities: {}, versionNegotiation: { mode: 'auto' } });
}

/** The era each provider speaks, learnt once per process. */
export const upstreamEras = new UpstreamEras();

function eraKey(target: UpstreamTarget): string {
  return target.transport === 'http' ? target.endpoint : `stdio:${JSON.stringify([target.command, ...(target.args ?? [])])}`;
}

/** Connects with the remembered era of the target (probing only when none is fresh) and remembers what it found. */
async function connectTo(client: Client, target: UpstreamTarget, transport: Transport, options: { signal?: AbortSignal; timeout: number }): Promise<void> {
  const key = eraKey(target);
  try {
    await client.connect(transport, { ...options, prior: upstreamEras.prior(key) });
  } catch (error) {
    upstreamEras.forget(key);
    throw error;
  }
  upstreamEras.learn(key, client);
}

/** Opens an MCP client session to the upstream for one operation and always closes it. */
export async function withUpstream<T>(scope: UpstreamScope, fn: (client: Client, signal: AbortSignal, timeoutMs: number) => Promise<T>): Promise<T> {
  const timeoutMs = effectiveTimeout(scope.deadlineAt);
  const signal = scope.signal ? AbortSignal.any([scope.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
  const client = newClient();
  try {
    try {
      await connectTo(client, scope.target, openTransport(scope.target, signal), { signal, timeout: timeoutMs });
    } catch {
      throw new UpstreamError('not_sent', 'no session to the upstream could be opened; nothing was sent');
    }
    return await fn(client, signal, timeoutMs);
  } catch (error) {
    throw classify(error, signal);
  } finally {
    await client.close().catch(() => undefined);
  }
}

/** The trusted actor a call runs for (R1): from the credential the gateway authenticated, never from arguments. */
export interface TrustedActor {
  /** The tenant: the agent's owner. */
  tenantId: string;
  /** The user: the agent itself. */
  userId: string;
}

/**
 * Who a call is for and through what it was authorised (R1, source 004's
 * `McpClientScope`): the actor, the saved workspace (the owner's), toolset (the
 * MCP URL profile) and server (the provider binding). The host checks access
 * and the binding before and after the I/O; the runtime refuses a call whose
 * scope is incomplete, before any I/O, and never forwards the actor upstream.
 */
export interface CallScope {
  actor: TrustedActor;
  workspaceId: string;
  toolsetId: string;
  serverName: string;
}

export interface UpstreamCall extends UpstreamScope {
  scope: CallScope;
  toolName: string;
  arguments: Record<string, unknown>;
  /** Forwarded in the request's `_meta`, so the provider can deduplicate (B5). */
  operationKey?: string;
  intentId: string;
  /** Asks the provider for progress (a `progressToken`) and hears each notification; absent: none is asked for. */
  onProgress?: (progress: UpstreamProgress) => void;
}

/** One `notifications/progress` of the provider, as MCP defines it. */
export interface UpstreamProgress {
  progress: number;
  total?: number;
  message?: string;
}

/**
 * Sessions kept open to HTTP providers, one per endpoint: a call reuses the
 * initialised client instead of paying the initialize handshake each time.
 * A session that fails is dropped (the failure is reported to the caller,
 * never retried here: execution owns retries, C7). stdio providers are started
 * per call.
 */
class UpstreamSessions {
  private readonly sessions = new Map<string, Promise<Client>>();

  async get(endpoint: string): Promise<Client> {
    let s = this.sessions.get(endpoint);
    if (!s) {
      s = (async () => {
        const client = newClient();
        client.onclose = () => this.sessions.delete(endpoint);
        const target: UpstreamTarget = { transport: 'http', endpoint };
        await connectTo(client, target, openTransport(target), { timeout: 10_000 });
        return client;
      })();
      this.sessions.set(endpoint, s);
      s.catch(() => this.sessions.delete(endpoint));
    }
    return s;
  }

  drop(endpoint: string): void {
    const s = this.sessions.get(endpoint);
    this.sessions.delete(endpoint);
    void s?.then((c) => c.close()).catch(() => undefined);
  }

  async closeAll(): Promise<void> {
    const all = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.all(all.map((s) => s.then((c) => c.close()).catch(() => undefined)));
  }
}

const sessions = new UpstreamSessions();

/** Closes the kept sessions (at shutdown). */
export function closeUpstreamSessions(): Promise<void> {
  return sessions.closeAll();
}

/** The first missing part of a call scope, if any. */
export function incompleteScope(scope: CallScope | undefined): string | undefined {
  if (!scope) return 'scope';
  const parts: [string, unknown][] = [['actor.tenantId', scope.actor?.tenantId], ['actor.userId', scope.actor?.userId], ['workspaceId', scope.workspaceId], ['toolsetId', scope.toolsetId], ['serverName', scope.serverName]];
  return parts.find(([, v]) => typeof v !== 'string' || v.length === 0)?.[0];
}

export async function callUpstreamTool(call: UpstreamCall): Promise<CallToolResult> {
  const missing = incompleteScope(call.scope);
  if (missing) throw new UpstreamError('scope', `the call has no trusted ${missing}; it was not sent`);
  const _meta: Record<string, unknown> = { 'tollgate/intentId': call.intentId };
  if (call.operationKey) _meta['tollgate/operationKey'] = call.operationKey;
  const request = { name: call.toolName, arguments: call.arguments, _meta };
  // The SDK adds the progressToken when a callback is given; the deadline stays the deadline (no reset on progress).
  const onprogress = call.onProgress;
  // An input_required answer comes back as it is (never fulfilled here, R4) and is refused below like -32021.
  const options = { allowInputRequired: true, ...(onprogress ? { onprogress: (p: UpstreamProgress) => onprogress({ progress: p.progress, total: p.total, message: p.message }) } : {}) };
  if (call.target.transport === 'stdio') {
    return withUpstream(call, async (client, signal, timeout) => completeOf(await client.callTool(request, { signal, timeout, ...options })));
  }
  const timeoutMs = effectiveTimeout(call.deadlineAt);
  const signal = call.signal ? AbortSignal.any([call.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
  const endpoint = call.target.endpoint;
  let client: Client;
  try {
    client = await sessions.get(endpoint);
  } catch {
    // No session: the tool call itself was never written to any socket.
    throw new UpstreamError('not_sent', 'no session to the provider could be opened; the call was not sent');
  }
  try {
    return completeOf(await client.callTool(request, { signal, timeout: timeoutMs, ...options }));
  } catch (error) {
    if (error instanceof UpstreamError) throw error;
    // A session that failed is not trusted again; the next call opens a fresh one.
    sessions.drop(endpoint);
    throw classify(error, signal);
  }
}

/** A tool's complete result, or the refusal of an `input_required` one (the session stays sound: it answered). */
function completeOf(result: unknown): CallToolResult {
  if ((result as { resultType?: unknown }).resultType === 'input_required') throw inputRequiredFailure(result as { inputRequests?: unknown });
  return result as CallToolResult;
}

export interface RefusedTool {
  name: string;
  reason: string;
}

export interface UpstreamToolList {
  tools: Tool[];
  /** Tools left out of the catalog, each with the reason (R6 size limit, a duplicate name). */
  refused: RefusedTool[];
  pages: number;
}

/**
 * Reads every page of `tools/list` within the R6 limits: at most 20 pages and
 * 1,000 tools, a repeated cursor is a cycle (the whole listing fails: its
 * pages cannot be trusted), and a tool whose metadata exceeds 64,000 bytes is
 * refused and reported while the others are kept.
 */
export async function listUpstreamTools(scope: UpstreamScope): Promise<UpstreamToolList> {
  return withUpstream(scope, async (client, signal, timeout) => {
    const tools: Tool[] = [];
    const refused: RefusedTool[] = [];
    const names = new Set<string>();
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 1; ; page++) {
      if (page > MAX_LIST_PAGES) throw new UpstreamError('limit', `tools/list has more than ${MAX_LIST_PAGES} pages`);
      // One page per request, walked here under the R6 limits (listTools() without a cursor would walk them itself).
      const res = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, { signal, timeout });
      for (const tool of res.tools) {
        const bytes = Buffer.byteLength(JSON.stringify(tool), 'utf8');
        if (bytes > MAX_TOOL_METADATA_BYTES) refused.push({ name: tool.name, reason: `metadata is ${bytes} bytes, over the ${MAX_TOOL_METADATA_BYTES}-byte limit` });
        else if (names.has(tool.name)) refused.push({ name: tool.name, reason: 'listed twice' });
        else {
          names.add(tool.name);
          tools.push(tool);
        }
      }
      if (tools.length + refused.length > MAX_LIST_TOOLS) throw new UpstreamError('limit', `tools/list returned more than ${MAX_LIST_TOOLS} tools`);
      if (!res.nextCursor) return { tools, refused, pages: page };
      if (seen.has(res.nextCursor)) throw new UpstreamError('limit', 'tools/list repeated a cursor (cycle)');
      seen.add(res.nextCursor);
      cursor = res.nextCursor;
    }
  });
}

/** A long-lived session with an upstream that reports `notifications/tools/list_changed`. */
export interface UpstreamWatch {
  close(): Promise<void>;
}

/**
 * Keeps a session open to hear `notifications/tools/list_changed` where the
 * upstream sends it: on a 2026-07-28 `subscriptions/listen` stream, or on a
 * 2025-era session (the Streamable HTTP GET stream, or stdio).
 * Resolves once connected; rejects when the upstream cannot be reached.
 */
export async function watchUpstreamToolList(target: UpstreamTarget, onChanged: () => void, onClosed: () => void): Promise<UpstreamWatch> {
  const client = newClient();
  client.setNotificationHandler('notifications/tools/list_changed', async () => onChanged());
  client.onclose = onClosed;
  const timeout = 10_000;
  await connectTo(client, target, openTransport(target), { timeout });
  if (client.getProtocolEra() === 'modern' && client.getServerCapabilities()?.tools?.listChanged) {
    const subscription = await client.listen({ toolsListChanged: true }, { timeout });
    // The stream ending (the provider restarted, the network dropped) is the watch ending: discovery re-watches.
    void subscription.closed.then((reason) => {
      if (reason !== 'local') void client.close();
    });
  }
  return { close: () => client.close() };
}
