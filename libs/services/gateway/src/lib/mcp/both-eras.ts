import { toNodeHandler } from '@modelcontextprotocol/node';
import { createJsonMcpHandler } from '@tollgate/mcp-runtime';
import {
  type AuthInfo, isLegacyRequest, type McpHandlerRequestOptions, type Server, WebStandardStreamableHTTPServerTransport,
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
 *   answered with the revision's errors and HTTP statuses; answers are single JSON bodies (nothing streams mid-call);
 * - a 2025-era request (no envelope: `initialize`, then plain requests) is answered by a fresh server over a
 *   stateless Streamable HTTP transport with JSON responses — exactly what the gateway answered before.
 * The SDK's own predicate (`isLegacyRequest`) decides, so routing never disagrees with the modern handler.
 * `build` makes the per-request server from the credential the controller already checked, for the request's era.
 */
export function bothEras(build: (authInfo: AuthInfo | undefined, era: 'modern' | 'legacy') => Server, onerror: (err: Error) => void): EraHandler {
  const modern = createJsonMcpHandler((ctx) => build(ctx.authInfo, ctx.era), { legacy: 'reject', onerror });
  const legacy = async (request: Request, options?: McpHandlerRequestOptions): Promise<Response> => {
    const server = build(options?.authInfo, 'legacy');
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request, { authInfo: options?.authInfo, parsedBody: options?.parsedBody });
    } finally {
      void server.close();
    }
  };
  const node = toNodeHandler({
    fetch: async (request, options) => ((await isLegacyRequest(request, options?.parsedBody)) ? legacy(request, options) : modern.fetch(request, options)),
  }, { onerror });
  return { node, toolsChanged: () => modern.notify.toolsChanged(), close: () => modern.close() };
}
