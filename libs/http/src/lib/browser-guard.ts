import { type NextFunction, type Request, type Response } from 'express';
import { localhostAllowedHostnames, localhostAllowedOrigins, validateHostHeader, validateOriginHeader } from '@modelcontextprotocol/server';
import { type Logger } from '@tollgate/observability';

/**
 * DNS-rebinding protection for the routes a browser page could be tricked into calling (the MCP endpoints and
 * sign-in), built on the MCP SDK's own Host and Origin validators. The transport section of the MCP specification
 * requires servers to validate `Origin`; a server on loopback is exactly where rebinding attacks land.
 *
 * - `allowedHosts` set: `Host` must name one of them and a present `Origin` must too.
 * - Unset, on a loopback address: both must be localhost-class (`localhost`, `127.0.0.1`, `[::1]`).
 * - Unset, on any other address (a deployment behind its own hostnames): `Host` is not checked, and a request whose
 *   `Origin` is another site than the one it was sent to is refused — non-browser clients send none; the deployment's
 *   own pages (the sign-in approval form) pass.
 * A missing `Origin` always passes (non-browser clients). A refusal is 403 with a JSON-RPC error and is logged as
 * one line at info: an expected refusal, not a fault.
 */
export interface BrowserGuardOptions {
  /** Path prefixes guarded (e.g. `/mcp`, `/signin`). */
  paths: readonly string[];
  /** Hostnames (no scheme, no port; IPv6 in brackets) allowed in `Host` and `Origin`; empty: the defaults above. */
  allowedHosts: readonly string[];
  /** The address the server binds to. */
  bindHost: string;
}

const LOOPBACK = new Set(['127.0.0.1', '::1', 'localhost', '[::1]']);

export function browserGuard(options: BrowserGuardOptions, logger: Logger) {
  const configured = options.allowedHosts.length > 0;
  const loopback = LOOPBACK.has(options.bindHost);
  const hosts = configured ? [...options.allowedHosts] : loopback ? localhostAllowedHostnames() : undefined;
  const origins = configured ? [...options.allowedHosts] : loopback ? localhostAllowedOrigins() : [];
  return (req: Request, res: Response, next: NextFunction): void => {
    if (!options.paths.some((p) => req.path === p || req.path.startsWith(`${p}/`))) return next();
    const host = hosts ? validateHostHeader(req.headers.host, hosts) : { ok: true as const };
    // Without a list, a deployment's own pages (the sign-in approval form) post from the origin they were served on.
    const origin = validateOriginHeader(req.headers.origin, hosts ? origins : [...origins, hostnameOf(req.headers.host)]);
    const refused = !host.ok ? host : !origin.ok ? origin : undefined;
    if (!refused) return next();
    logger.info({ code: 'MCP_ORIGIN_NOT_ALLOWED', reason: refused.errorCode, path: req.path }, 'request refused: Host or Origin not allowed (GATEWAY_ALLOWED_HOSTS)');
    res.status(403).json({ jsonrpc: '2.0', id: null, error: { code: -32000, message: `Forbidden: ${refused.message}`, data: { code: 'MCP_ORIGIN_NOT_ALLOWED' } } });
  };
}

/** The hostname a `Host` header names (no port; IPv6 keeps its brackets), or a name no origin has. */
function hostnameOf(host: string | undefined): string {
  if (!host) return '\u0000';
  return host.startsWith('[') ? host.slice(0, host.indexOf(']') + 1) : host.split(':')[0]!;
}
