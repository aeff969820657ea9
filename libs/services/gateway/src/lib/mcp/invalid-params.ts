import { PROTOCOL_VERSION_META_KEY, specTypeSchemas } from '@modelcontextprotocol/server';

type Issue = { path?: readonly unknown[]; message: string };
type Validator = { '~standard': { validate(value: unknown): unknown } };
/** A Map, not an object: a method named `__proto__` or `constructor` must find nothing (found by the fuzz suite). */
const SCHEMAS = new Map<string, Validator>([
  ['tools/call', specTypeSchemas.CallToolRequest],
  ['tools/list', specTypeSchemas.ListToolsRequest],
  ['initialize', specTypeSchemas.InitializeRequest],
  ['ping', specTypeSchemas.PingRequest],
  ['server/discover', specTypeSchemas.DiscoverRequest],
]);

export interface InvalidParams {
  id: string | number | null;
  problems: { field: string; problem: string }[];
}

/**
 * A request of a method the gateway serves (initialize, server/discover, ping, tools/call, tools/list) whose params
 * do not fit the protocol, in either era: answered as JSON-RPC -32602 with the fields named — instead of
 * the SDK's error carrying its validator's raw text.
 */
export function invalidParams(body: unknown): InvalidParams | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { method, id, params } = body as { method?: unknown; id?: unknown; params?: { _meta?: Record<string, unknown> } };
  const schema = typeof method === 'string' ? SCHEMAS.get(method) : undefined;
  if (!schema || id === undefined) return undefined;
  // Under the 2026-07-28 envelope `initialize` no longer exists: the SDK answers it (HTTP 404, -32601), whatever its params.
  if (method === 'initialize' && params?._meta?.[PROTOCOL_VERSION_META_KEY] !== undefined) return undefined;
  const { issues } = schema['~standard'].validate(body) as { issues?: readonly Issue[] };
  if (!issues) return undefined;
  return {
    id: typeof id === 'string' || typeof id === 'number' ? id : null,
    problems: issues.slice(0, 5).map((i) => ({ field: (i.path ?? []).map((p) => String(typeof p === 'object' && p !== null && 'key' in p ? (p as { key: unknown }).key : p)).join('.') || 'params', problem: i.message.slice(0, 120) })),
  };
}
