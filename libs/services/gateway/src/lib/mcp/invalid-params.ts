import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const SCHEMAS: Record<string, { safeParse(v: unknown): { success: boolean; error?: { issues: { path: PropertyKey[]; message: string }[] } } }> = {
  'tools/call': CallToolRequestSchema,
  'tools/list': ListToolsRequestSchema,
};

export interface InvalidParams {
  id: string | number | null;
  problems: { field: string; problem: string }[];
}

/**
 * A tools/call or tools/list request whose params do not fit the protocol (issue 12): answered as JSON-RPC -32602
 * with the fields named — instead of the SDK's -32603 carrying its validator's raw text.
 */
export function invalidParams(body: unknown): InvalidParams | undefined {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
  const { method, id } = body as { method?: unknown; id?: unknown };
  const schema = typeof method === 'string' ? SCHEMAS[method] : undefined;
  if (!schema || id === undefined) return undefined;
  const parsed = schema.safeParse(body);
  if (parsed.success) return undefined;
  return {
    id: typeof id === 'string' || typeof id === 'number' ? id : null,
    problems: (parsed.error?.issues ?? []).slice(0, 5).map((i) => ({ field: i.path.map(String).join('.') || 'params', problem: i.message.slice(0, 120) })),
  };
}
