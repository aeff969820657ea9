import { type IncomingHttpHeaders } from 'node:http';
import { PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';

/**
 * Mcp-Param headers (2026-07-28, SEP-2243). A catalog tool's input schema may mark a parameter with
 * `x-mcp-header: <Name>`: a client then also sends its value in the `Mcp-Param-<Name>` header, so load balancers and
 * gateways can route on it without reading the body. The server must hold the two to the same value — a body value
 * without its header, an undecodable `=?base64?…?=` value or a header that says something else is refused with HTTP
 * 400 and -32020 (HeaderMismatch) — or a router and the provider would act on different requests.
 */

/** One `x-mcp-header` declaration: where the parameter sits in the arguments and the header that carries it. */
export interface ParamHeader {
  path: string[];
  header: string;
  numeric: boolean;
}

export interface ParamHeaderMismatch {
  id: string | number;
  message: string;
  data: { mismatch: { header: string; body: string } };
}

export const HEADER_MISMATCH = -32020;

const BASE64_PREFIX = '=?base64?';
const BASE64_SUFFIX = '?=';
/** Canonical Base64: whole quanta, padding only at the end (a lenient decoder would accept what the spec refuses). */
const CANONICAL_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The declarations of a schema, found on `properties` chains only (the places SEP-2243 admits them). */
export function paramHeadersOf(schema: unknown, path: string[] = []): ParamHeader[] {
  const properties = (schema as { properties?: unknown } | null)?.properties;
  if (!properties || typeof properties !== 'object') return [];
  return Object.entries(properties as Record<string, unknown>).flatMap(([key, def]) => {
    const here = [...path, key];
    const header = (def as Record<string, unknown> | null)?.['x-mcp-header'];
    const type = (def as { type?: unknown } | null)?.type;
    const own = typeof header === 'string' && header ? [{ path: here, header, numeric: type === 'integer' || type === 'number' }] : [];
    return [...own, ...paramHeadersOf(def, here)];
  });
}

/** Per catalog schema object, scanned once: a catalog reload brings new objects, so nothing goes stale. */
const scanned = new WeakMap<object, ParamHeader[]>();

function declarationsOf(schema: unknown): ParamHeader[] {
  if (!schema || typeof schema !== 'object') return [];
  let declared = scanned.get(schema);
  if (!declared) scanned.set(schema, (declared = paramHeadersOf(schema)));
  return declared;
}

/** A header's value as the client meant it: Base64 inside the sentinel, literal otherwise; undefined when undecodable. */
export function decodeParamHeader(value: string): string | undefined {
  if (!(value.startsWith(BASE64_PREFIX) && value.endsWith(BASE64_SUFFIX)) || value.length < BASE64_PREFIX.length + BASE64_SUFFIX.length) return value;
  const encoded = value.slice(BASE64_PREFIX.length, -BASE64_SUFFIX.length);
  if (!CANONICAL_BASE64.test(encoded)) return undefined;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(Buffer.from(encoded, 'base64'));
  } catch {
    return undefined;
  }
}

/** The first disagreement between a call's arguments and its Mcp-Param headers, or undefined when they agree. */
export function paramHeaderProblem(declared: ParamHeader[], args: Record<string, unknown>, headers: IncomingHttpHeaders): { header: string; body: string } | undefined {
  for (const d of declared) {
    const value = d.path.reduce<unknown>((node, key) => (node && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined), args);
    if (value === undefined || value === null || typeof value === 'object') continue;
    const header = `Mcp-Param-${d.header}`;
    const sent = headers[header.toLowerCase()];
    const raw = Array.isArray(sent) ? sent.join(', ') : sent;
    const where = `${d.path.join('.')}=${JSON.stringify(value)}`;
    if (raw === undefined) return { header, body: `the body carries ${where} but the ${header} header is absent` };
    const decoded = decodeParamHeader(raw);
    if (decoded === undefined) return { header, body: `the ${header} header is not valid Base64 inside =?base64?…?=` };
    const same = d.numeric && typeof value === 'number' ? decoded.trim() !== '' && Number(decoded) === value : decoded === String(value);
    if (!same) return { header, body: `the ${header} header says ${JSON.stringify(decoded)} but the body carries ${where}` };
  }
  return undefined;
}

/**
 * For a 2026-07-28 tools/call of a tool the caller may call directly: the mismatch to refuse, if any. `schemaOf` gives
 * the named tool's input schema when this caller can reach it (nothing is said about tools it cannot).
 */
export function paramHeaderMismatch(body: unknown, headers: IncomingHttpHeaders, schemaOf: (name: string) => unknown): ParamHeaderMismatch | undefined {
  const { id, method, params } = (body ?? {}) as { id?: unknown; method?: unknown; params?: { name?: unknown; arguments?: unknown; _meta?: unknown } };
  if (method !== 'tools/call' || (typeof id !== 'string' && typeof id !== 'number') || typeof params?.name !== 'string') return undefined;
  const meta = params._meta;
  if (!meta || typeof meta !== 'object' || !(PROTOCOL_VERSION_META_KEY in meta)) return undefined;
  const declared = declarationsOf(schemaOf(params.name));
  if (declared.length === 0) return undefined;
  const args = params.arguments && typeof params.arguments === 'object' ? (params.arguments as Record<string, unknown>) : {};
  const problem = paramHeaderProblem(declared, args, headers);
  return problem ? { id, message: `Bad Request: the request headers and body disagree: ${problem.body}`, data: { mismatch: problem } } : undefined;
}
