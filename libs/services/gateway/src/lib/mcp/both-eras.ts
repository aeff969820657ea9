import { toNodeHandler } from '@modelcontextprotocol/node';
import {
  type AuthInfo, createMcpHandler, isLegacyRequest, type McpHandlerRequestOptions, type Server, WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';

/** One gateway MCP URL serving both protocol eras, as a Node `(req, res, body)` handler. */
export interface EraHandler {
  node: ReturnType<typeof toNodeHandler>;
  /** Tells every open 2026-07-28 `subscriptions/listen` stream (that asked for it) that the tool list changed. */
  toolsChanged(): void;
  close(): Promise<void>;
}

/**
 * Both MCP eras on one endpoint, stateless:
 * - a request carrying the 2026-07-28 envelope (`_meta` protocol version, `server/discover`, `Mcp-Method` headers)
 *   goes to the SDK's modern handler — header/body agreement, unsupported versions and caching hints are the SDK's,
 *   answered with the revision's errors and HTTP statuses; an answer is a single JSON body unless the handler sends
 *   something first (the provider's progress on a call that asked for it), when it becomes an SSE stream;
 * - a 2025-era request (no envelope: `initialize`, then plain requests) is answered by a fresh server over a
 *   stateless Streamable HTTP transport: JSON, or SSE for a request that carries a `progressToken` (the only one
 *   that may hear something before its result).
 * The SDK's own predicate (`isLegacyRequest`) decides, so routing never disagrees with the modern handler.
 * `build` makes the per-request server from the credential the controller already checked, for the request's era.
 */
export function bothEras(build: (authInfo: AuthInfo | undefined, era: 'modern' | 'legacy') => Server, onerror: (err: Error) => void): EraHandler {
  const modern = createMcpHandler((ctx) => build(ctx.authInfo, ctx.era), { legacy: 'reject', onerror, responseMode: 'auto' });
  const legacy = async (request: Request, options?: McpHandlerRequestOptions): Promise<Response> => {
    const server = build(options?.authInfo, 'legacy');
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: !asksForProgress(options?.parsedBody) });
    await server.connect(transport);
    let response: Response;
    try {
      response = await transport.handleRequest(request, { authInfo: options?.authInfo, parsedBody: options?.parsedBody });
    } catch (err) {
      void server.close();
      throw err;
    }
    // A streamed answer is still being written when handleRequest returns: the server closes when its stream ends.
    return closingWith(response, () => void server.close());
  };
  const node = toNodeHandler({
    fetch: async (request, options) => ((await isLegacyRequest(request, options?.parsedBody)) ? legacy(request, options) : modern.fetch(request, options)),
  }, { onerror });
  return { node, toolsChanged: () => modern.notify.toolsChanged(), close: () => modern.close() };
}

/** A 2025-era `tools/call` whose `_meta` carries a progressToken: its answer streams, so progress can come first. */
export function asksForProgress(body: unknown): boolean {
  const message = body as { method?: unknown; params?: { _meta?: { progressToken?: unknown } } } | undefined;
  const token = message?.params?._meta?.progressToken;
  return message?.method === 'tools/call' && (typeof token === 'string' || typeof token === 'number');
}

/** The response, calling `done` once: at once for a plain body, or when a streamed body ends or its reader goes away. */
function closingWith(response: Response, done: () => void): Response {
  if (!response.body || !response.headers.get('content-type')?.startsWith('text/event-stream')) {
    done();
    return response;
  }
  const reader = response.body.getReader();
  let ended = false;
  const end = () => {
    if (!ended) done();
    ended = true;
  };
  const body = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done: last, value } = await reader.read();
        if (last) {
          end();
          controller.close();
        } else controller.enqueue(value);
      } catch (err) {
        end();
        controller.error(err);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
  return new Response(body, { status: response.status, statusText: response.statusText, headers: response.headers });
}
