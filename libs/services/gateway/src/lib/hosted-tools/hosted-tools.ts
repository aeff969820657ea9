import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { agentErrorResult, type AgentError, ProviderSchemas } from '@tollgate/contracts';

/**
 * The three hosted tools' input schemas (source 000), served in tools/list and
 * enforced here with ajv — JSON Schema, no type coercion — so a bad input is a
 * TOOL_ARGUMENTS_INVALID result naming the field, in the shared error shape.
 */
export const SEARCH_TOOLS_INPUT = {
  type: 'object',
  properties: {
    query: { type: 'string', description: 'What the tool should do, in plain words. Required unless `cursor` is given; at most 500 characters / 1,500 UTF-8 bytes.' },
    category: { type: 'string', description: 'Only tools of this category (case-insensitive, at most 64 characters).' },
    detail: { type: 'string', enum: ['names', 'summary', 'full'], description: 'names | summary (default) | full.' },
    limit: { type: 'integer', description: 'Page size: default 10 (names), 5 (summary), 3 (full); at most 50.' },
    cursor: { type: 'string', description: 'The previous response\'s nextCursor; continues that search.' },
  },
  additionalProperties: false,
} as const;

export const GET_TOOL_INPUT = {
  type: 'object',
  properties: { name: { type: 'string', description: 'The catalog tool\'s name, as search_tools returned it.' } },
  required: ['name'],
  additionalProperties: false,
} as const;

export const CALL_TOOL_INPUT = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, description: 'The catalog tool to run (never a discovery tool).' },
    arguments: { type: 'object', description: 'Arguments matching the tool\'s input schema; defaults to {}.' },
  },
  required: ['name'],
  additionalProperties: false,
} as const;

export const HOSTED_TOOLS = [
  {
    name: 'search_tools',
    description: 'Finds catalog tools by what they do. Free: it never calls a provider. Returns ranked results with name and score; detail "summary" adds price and version, "full" adds the input schema. Page with nextCursor.',
    inputSchema: SEARCH_TOOLS_INPUT,
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'get_tool',
    description: 'Reads one catalog tool\'s full contract (input/output schema, examples, version, price, free calls left today). Free.',
    inputSchema: GET_TOOL_INPUT,
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'call_tool',
    description: 'Runs a catalog tool by name at that tool\'s price (no extra fee). Payment and idempotency metadata go in the request _meta, outside the arguments: the operation key as _meta["assay/idempotencyKey"], the same for every retry.',
    inputSchema: CALL_TOOL_INPUT,
    annotations: { readOnlyHint: false, openWorldHint: true },
  },
] as const;

const ajv = new Ajv({ allErrors: true, coerceTypes: false, useDefaults: false, strict: true });
const validators = new Map<object, ValidateFunction>();

function describe(e: ErrorObject): { field: string; problem: string } {
  if (e.keyword === 'additionalProperties') {
    const extra = (e.params as { additionalProperty: string }).additionalProperty;
    return { field: extra, problem: 'is not an input of this tool; remove it' };
  }
  if (e.keyword === 'required') return { field: (e.params as { missingProperty: string }).missingProperty, problem: 'is required' };
  return { field: e.instancePath.replace(/^\//, '').replace(/\//g, '.') || '(input)', problem: e.message ?? 'is invalid' };
}

/** An error result naming every bad field, or undefined when `args` matches `schema`. */
export function checkArguments(schema: object, args: unknown): ReturnType<typeof agentErrorResult> | undefined {
  let validate = validators.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(schema, validate);
  }
  if (validate(args)) return undefined;
  const problems = (validate.errors ?? []).map(describe);
  return invalidArguments(problems);
}

export function invalidArguments(problems: { field: string; problem: string }[]): ReturnType<typeof agentErrorResult> {
  return agentErrorResult({
    code: 'TOOL_ARGUMENTS_INVALID', retryable: false,
    message: `Fix the input: ${problems.map((p) => `${p.field} ${p.problem}`).join('; ')}.`,
    details: { problems },
  });
}

export function refusal(error: AgentError): ReturnType<typeof agentErrorResult> {
  return agentErrorResult(error);
}

/** Catalog tools' input schemas come from providers: compiled leniently (unknown keywords allowed), never coercing. */
const catalogSchemas = new ProviderSchemas({ allErrors: true, coerceTypes: false, useDefaults: false, strict: false, validateFormats: false });
const catalogValidators = new Map<string, ValidateFunction | 'invalid'>();
/** R6: a call envelope (tool name and arguments) is at most this many bytes. */
export const MAX_CALL_ENVELOPE_BYTES = 64_000;

/**
 * R4: a catalog tool's arguments against the approved contract's input schema,
 * with no type coercion; `contractKey` (the contract hash) caches the compiled
 * schema. An upstream schema that does not compile refuses nothing here: the
 * provider's own validation stays in force.
 */
export function checkCatalogArguments(contractKey: string, schema: Record<string, unknown>, name: string, args: Record<string, unknown>): ReturnType<typeof agentErrorResult> | undefined {
  const bytes = Buffer.byteLength(JSON.stringify({ name, arguments: args }), 'utf8');
  if (bytes > MAX_CALL_ENVELOPE_BYTES) return invalidArguments([{ field: 'arguments', problem: `make the call ${bytes} bytes; at most ${MAX_CALL_ENVELOPE_BYTES} are accepted` }]);
  let validate = catalogValidators.get(contractKey);
  if (!validate) {
    try {
      validate = catalogSchemas.compile(schema);
    } catch {
      validate = 'invalid';
    }
    catalogValidators.set(contractKey, validate);
  }
  if (validate === 'invalid' || validate(args)) return undefined;
  return invalidArguments((validate.errors ?? []).map(describe));
}

/** A successful hosted-tool answer: structuredContent and the same JSON as text (G3.8, G4). */
export function structuredResult(value: Record<string, unknown>): { content: { type: 'text'; text: string }[]; structuredContent: Record<string, unknown> } {
  return { content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value };
}
