import { CallToolRequestSchema, InitializeRequestSchema, ListToolsRequestSchema, PingRequestSchema } from '@modelcontextprotocol/sdk/types.js';

type Schema = { safeParse(v: unknown): { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } } };
/** A Map, not an object: a method named `__proto__` or `constructor` must find nothing (found by the fuzz suite). */
const SCHEMAS = new Map<string, Schema>([
  ['tools/call', CallToolRequestSchema],
  ['tools/list', ListToolsRequestSchema],
  ['initialize', InitializeRequestSchema],
  ['ping', PingRequestSchema],
]);

export interface InvalidParams {
  id: string | number | null;
  problems: { field: string; problem: string }[];
}

/**
 * A request of a method the gateway serves (initialize, ping, tools/call, tools/list) whose params do not fit the protocol (issue 12): answered as JSON-RPC -32602
 * with the fields named — instead of the SDK's -32603 carrying its validator's raw text.
 */
export function invalidParams(body: unknown): InvalidParams | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { method, id } = body as { method?: unknown; id?: unknown };
  const schema = typeof method === 'string' ? SCHEMAS.get(method) : undefined;
  if (!schema || id === undefined) return undefined;
  const parsed = schema.safeParse(body);
  if (parsed.success) return undefined;
  return {
    id: typeof id === 'string' || typeof id === 'number' ? id : null,
    problems: (parsed.error?.issues ?? []).slice(0, 5).map((i) => ({ field: i.path.map(String).join('.') || 'params', problem: i.message.slice(0, 120) })),
  };
}
