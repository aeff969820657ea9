import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult, type Tool } from '@modelcontextprotocol/sdk/types.js';

/** R6: one upstream operation never runs longer than this, whatever the caller asks. */
export const MAX_OPERATION_MS = 30_000;
/** R6: discovery reads at most this many pages and tools. */
export const MAX_LIST_PAGES = 20;
export const MAX_LIST_TOOLS = 1000;

export type UpstreamFailureKind = 'deadline' | 'connection' | 'protocol' | 'limit';

/** A failure talking to an upstream MCP server; `kind` tells whether the request may have reached it. */
export class UpstreamError extends Error {
  constructor(
    readonly kind: UpstreamFailureKind,
    message: string,
  ) {
    super(message);
    this.name = 'UpstreamError';
  }
}

export interface UpstreamScope {
  endpoint: string;
  /** Absolute deadline (epoch ms); clamped to now + 30 s. */
  deadlineAt: number;
  signal?: AbortSignal;
}

function effectiveTimeout(deadlineAt: number): number {
  const ms = Math.min(deadlineAt - Date.now(), MAX_OPERATION_MS);
  if (ms <= 0) throw new UpstreamError('deadline', 'the deadline passed before the upstream was called');
  return ms;
}

function classify(error: unknown, signal: AbortSignal): UpstreamError {
  if (error instanceof UpstreamError) return error;
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  if (signal.aborted || /abort|timed? ?out/i.test(text)) return new UpstreamError('deadline', 'the upstream did not answer before the deadline');
  if (/ECONNREFUSED|ECONNRESET|socket|fetch failed|network|EPIPE/i.test(text)) return new UpstreamError('connection', 'the connection to the upstream failed');
  return new UpstreamError('protocol', 'the upstream answered with a protocol error');
}

/**
 * Opens an MCP client session to the upstream for one operation and always
 * closes it. The client declares no sampling or elicitation capability, so an
 * upstream cannot turn a call into an interaction.
 */
export async function withUpstream<T>(scope: UpstreamScope, fn: (client: Client, signal: AbortSignal, timeoutMs: number) => Promise<T>): Promise<T> {
  const timeoutMs = effectiveTimeout(scope.deadlineAt);
  const signal = scope.signal ? AbortSignal.any([scope.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
  const client = new Client({ name: 'tollgate-execution', version: '0.1.0' }, { capabilities: {} });
  const transport = new StreamableHTTPClientTransport(new URL(scope.endpoint), { requestInit: { signal } });
  try {
    await client.connect(transport, { signal, timeout: timeoutMs });
    return await fn(client, signal, timeoutMs);
  } catch (error) {
    throw classify(error, signal);
  } finally {
    await client.close().catch(() => undefined);
  }
}

export interface UpstreamCall extends UpstreamScope {
  toolName: string;
  arguments: Record<string, unknown>;
  /** Forwarded in the request's `_meta`, so the provider can deduplicate (B5). */
  operationKey?: string;
  intentId: string;
}

export async function callUpstreamTool(call: UpstreamCall): Promise<CallToolResult> {
  return withUpstream(call, async (client, signal, timeout) => {
    const _meta: Record<string, unknown> = { 'tollgate/intentId': call.intentId };
    if (call.operationKey) _meta['tollgate/operationKey'] = call.operationKey;
    const result = await client.callTool({ name: call.toolName, arguments: call.arguments, _meta }, undefined, { signal, timeout });
    return result as CallToolResult;
  });
}

/** Reads every page of `tools/list` within the R6 limits; a repeated cursor is a cycle. */
export async function listUpstreamTools(scope: UpstreamScope): Promise<Tool[]> {
  return withUpstream(scope, async (client, signal, timeout) => {
    const tools: Tool[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 1; ; page++) {
      if (page > MAX_LIST_PAGES) throw new UpstreamError('limit', `tools/list has more than ${MAX_LIST_PAGES} pages`);
      const res = await client.listTools(cursor ? { cursor } : {}, { signal, timeout });
      tools.push(...res.tools);
      if (tools.length > MAX_LIST_TOOLS) throw new UpstreamError('limit', `tools/list returned more than ${MAX_LIST_TOOLS} tools`);
      if (!res.nextCursor) return tools;
      if (seen.has(res.nextCursor)) throw new UpstreamError('limit', 'tools/list repeated a cursor (cycle)');
      seen.add(res.nextCursor);
      cursor = res.nextCursor;
    }
  });
}
