import { PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/server';
import { type InputProblem, unsafeInput } from './safe-input';

const DISCOVERY_TOOLS = new Set(['search_tools', 'get_tool']);

/** What the gateway refuses before the MCP SDK parses a request (its validators recurse, so hostile nesting would exhaust the stack). */
export type EdgeRefusal =
  /** A tools/call the agent must fix: answered as a TOOL_ARGUMENTS_INVALID tool result, like any refused call. */
  | { kind: 'arguments'; id: string | number; modern: boolean; problem: InputProblem }
  /** Any other request: JSON-RPC -32602 naming the field. */
  | { kind: 'params'; id: string | number | null; problem: InputProblem };

/**
 * Point 5, in both eras: a call that may reach the database and a provider is refused here when its name,
 * arguments or `_meta` are unsafe (NUL, lone surrogates, prototype keys, too deep, too large); the discovery tools'
 * arguments and every other request are held to the nesting and size bounds only.
 */
export function refuseAtEdge(body: unknown): EdgeRefusal | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return shapeRefusal(body, null);
  const { id, method, params } = body as { id?: unknown; method?: unknown; params?: unknown };
  const requestId = typeof id === 'string' || typeof id === 'number' ? id : null;
  if (method !== 'tools/call' || requestId === null || !params || typeof params !== 'object') return shapeRefusal(body, requestId);
  const { name, arguments: args, _meta: meta } = params as { name?: unknown; arguments?: unknown; _meta?: unknown };
  const shapeOnly = typeof name === 'string' && DISCOVERY_TOOLS.has(name);
  const problem = unsafeInput(args ?? {}, 'arguments', shapeOnly) ?? unsafeInput(meta ?? {}, '_meta', shapeOnly) ?? unsafeInput(name, 'name', shapeOnly);
  if (!problem) return undefined;
  const modern = !!meta && typeof meta === 'object' && PROTOCOL_VERSION_META_KEY in meta;
  return { kind: 'arguments', id: requestId, modern, problem };
}

function shapeRefusal(body: unknown, id: string | number | null): EdgeRefusal | undefined {
  const problem = unsafeInput(body, 'request', true);
  return problem ? { kind: 'params', id, problem } : undefined;
}
