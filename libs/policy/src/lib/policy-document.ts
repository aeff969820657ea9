import { parseDocument } from 'yaml';
import { compilePattern, hasLiteralStar, type ToolPattern } from './wildcard';
import { POLICY_LIMITS } from './policy-limits';

export type JsonSchema = Record<string, unknown> | boolean;
export type UnconstrainedMode = 'warn' | 'deny' | 'allow';

export type SequenceRule =
  | { type: 'require'; tool: string }
  | { type: 'before'; first: string; then: string }
  | { type: 'immediately_before'; first: string; then: string }
  | { type: 'after'; trigger: string; then: string; within: number }
  | { type: 'eventually'; tool: string; within: number }
  | { type: 'max_calls'; tool: string; max: number }
  | { type: 'never_after'; trigger: string; forbidden: string };

/** A full policy (dialect "2.0"): what assay_check_args, assay_check_sequence and the gateway's access policy read. */
export interface Policy {
  version: '2.0';
  name?: string;
  allow?: ToolPattern[];
  deny: ToolPattern[];
  /** Tool name → JSON Schema of its arguments; `$defs` holds shared definitions. */
  schemas: Record<string, JsonSchema>;
  defs: Record<string, JsonSchema>;
  unconstrained: UnconstrainedMode;
  sequences: SequenceRule[];
  /** Things the loader noticed that are not errors (a deny pattern that blocks nothing, an ignored section). */
  warnings: string[];
}

/** The compatibility dialect of assay_policy_decide: a root list of exact names. */
export interface Blocklist {
  blocklist: string[];
}

/** The policy text is not a policy this dialect accepts; `message` is safe to show (no file content). */
export class PolicyParseError extends Error {
  readonly code = 'E_POLICY_PARSE';
  constructor(message: string) {
    super(message.slice(0, POLICY_LIMITS.maxMessageChars));
    this.name = 'PolicyParseError';
  }
}

const FULL_KEYS = new Set(['version', 'name', 'description', 'tools', 'schemas', 'enforcement', 'sequences', 'limits', 'signatures']);
const CANONICAL_NAME_FIELDS = ['tools', 'allow', 'deny'];

function yamlRoot(text: string): Record<string, unknown> {
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: false, strict: true });
  if (doc.errors.length > 0) throw new PolicyParseError(`the policy is not valid YAML (line ${doc.errors[0]!.linePos?.[0]?.line ?? '?'})`);
  let root: unknown;
  try {
    root = doc.toJS({ maxAliasCount: POLICY_LIMITS.maxYamlAliases });
  } catch {
    throw new PolicyParseError('the policy uses too many YAML aliases');
  }
  if (typeof root !== 'object' || root === null || Array.isArray(root)) throw new PolicyParseError('the policy root must be a mapping');
  return root as Record<string, unknown>;
}

const isStringList = (v: unknown): v is string[] => Array.isArray(v) && v.every((x) => typeof x === 'string');
const posInt = (v: unknown) => typeof v === 'number' && Number.isInteger(v) && v >= 1;

function sequenceRule(raw: unknown, i: number): SequenceRule {
  const where = `sequences[${i}]`;
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new PolicyParseError(`${where} must be a mapping`);
  const r = raw as Record<string, unknown>;
  const str = (k: string) => {
    if (typeof r[k] !== 'string' || (r[k] as string).length === 0) throw new PolicyParseError(`${where}.${k} must be a tool name`);
    return r[k] as string;
  };
  const int = (k: string) => {
    if (!posInt(r[k])) throw new PolicyParseError(`${where}.${k} must be a whole number of calls, at least 1`);
    return r[k] as number;
  };
  const only = (...keys: string[]) => {
    const extra = Object.keys(r).filter((k) => k !== 'type' && !keys.includes(k));
    if (extra.length > 0) throw new PolicyParseError(`${where} (${String(r['type'])}) has unknown field ${extra[0]}`);
  };
  switch (r['type']) {
    case 'require': only('tool'); return { type: 'require', tool: str('tool') };
    case 'before': only('first', 'then'); return { type: 'before', first: str('first'), then: str('then') };
    case 'immediately_before': only('first', 'then'); return { type: 'immediately_before', first: str('first'), then: str('then') };
    case 'after': only('trigger', 'then', 'within'); return { type: 'after', trigger: str('trigger'), then: str('then'), within: int('within') };
    case 'eventually': only('tool', 'within'); return { type: 'eventually', tool: str('tool'), within: int('within') };
    case 'max_calls': only('tool', 'max'); return { type: 'max_calls', tool: str('tool'), max: typeof r['max'] === 'number' && Number.isInteger(r['max']) && r['max'] >= 0 ? r['max'] : (() => { throw new PolicyParseError(`${where}.max must be a whole number, at least 0`); })() };
    case 'never_after': only('trigger', 'forbidden'); return { type: 'never_after', trigger: str('trigger'), forbidden: str('forbidden') };
    default: throw new PolicyParseError(`${where}.type must be one of require, before, immediately_before, after, eventually, max_calls, never_after`);
  }
}

/** Local references only: `#/...` inside the policy; anything else would mean fetching. */
function checkRefs(node: unknown, path: string): void {
  if (Array.isArray(node)) return node.forEach((n, i) => checkRefs(n, `${path}/${i}`));
  if (typeof node !== 'object' || node === null) return;
  for (const [k, v] of Object.entries(node)) {
    if (k === '$ref' && (typeof v !== 'string' || !v.startsWith('#/'))) throw new PolicyParseError(`${path}: only local $ref ("#/...") is allowed; nothing is fetched`);
    checkRefs(v, `${path}/${k}`);
  }
}

/** Parses and checks a full policy (dialect "2.0"). Throws PolicyParseError. */
export function parsePolicy(text: string): Policy {
  const root = yamlRoot(text);
  if ('blocklist' in root) throw new PolicyParseError('blocklist is the compatibility dialect of assay_policy_decide; a full policy uses tools.deny');
  const unknown = Object.keys(root).find((k) => !FULL_KEYS.has(k));
  if (unknown) throw new PolicyParseError(`unknown policy field ${unknown}`);
  const version = root['version'] ?? '2.0';
  if (version !== '2.0') throw new PolicyParseError(`unsupported policy version ${JSON.stringify(version)}; this dialect is "2.0"`);
  const warnings: string[] = [];

  const tools = (root['tools'] ?? {}) as Record<string, unknown>;
  if (typeof tools !== 'object' || tools === null || Array.isArray(tools)) throw new PolicyParseError('tools must be a mapping with allow and deny lists');
  const badTools = Object.keys(tools).find((k) => k !== 'allow' && k !== 'deny');
  if (badTools) throw new PolicyParseError(`unknown field tools.${badTools}`);
  for (const k of ['allow', 'deny'] as const) {
    if (tools[k] !== undefined && !isStringList(tools[k])) throw new PolicyParseError(`tools.${k} must be a list of tool names or patterns`);
  }
  const allow = tools['allow'] === undefined ? undefined : (tools['allow'] as string[]).map(compilePattern);
  const deny = ((tools['deny'] as string[] | undefined) ?? []).map(compilePattern);
  for (const p of deny) if (hasLiteralStar(p)) warnings.push(`tools.deny entry "${p.source}" has a * in the middle, which is a literal character: it blocks nothing`);
  for (const p of allow ?? []) if (hasLiteralStar(p)) warnings.push(`tools.allow entry "${p.source}" has a * in the middle, which is a literal character`);

  const schemasRaw = root['schemas'] ?? {};
  if (typeof schemasRaw !== 'object' || schemasRaw === null || Array.isArray(schemasRaw)) throw new PolicyParseError('schemas must map tool names to JSON Schemas');
  const { $defs, ...schemas } = schemasRaw as Record<string, JsonSchema>;
  for (const [tool, s] of Object.entries(schemas)) {
    if (typeof s !== 'boolean' && (typeof s !== 'object' || s === null || Array.isArray(s))) throw new PolicyParseError(`schemas.${tool} must be a JSON Schema`);
  }
  if ($defs !== undefined && (typeof $defs !== 'object' || $defs === null || Array.isArray($defs))) throw new PolicyParseError('schemas.$defs must be a mapping');
  checkRefs(schemasRaw, '#/schemas');

  const enforcement = (root['enforcement'] ?? {}) as Record<string, unknown>;
  const mode = enforcement['unconstrained_tools'] ?? 'warn';
  if (mode !== 'warn' && mode !== 'deny' && mode !== 'allow') throw new PolicyParseError('enforcement.unconstrained_tools must be warn, deny or allow');

  const seqRaw = root['sequences'] ?? [];
  if (!Array.isArray(seqRaw)) throw new PolicyParseError('sequences must be a list of rules');
  const sequences = seqRaw.map(sequenceRule);
  for (const k of ['limits', 'signatures']) if (k in root) warnings.push(`${k} is accepted for compatibility and not enforced by these tools`);

  return {
    version: '2.0', ...(typeof root['name'] === 'string' ? { name: root['name'] } : {}), ...(allow ? { allow } : {}), deny,
    schemas, defs: ($defs as Record<string, JsonSchema> | undefined) ?? {}, unconstrained: mode, sequences, warnings,
  };
}

/** Parses the compatibility dialect: a root mapping whose only field is `blocklist` (exact names), plus an optional `version: "1.0"`. */
export function parseBlocklist(text: string): Blocklist {
  const root = yamlRoot(text);
  const canonical = CANONICAL_NAME_FIELDS.filter((k) => k in root);
  if (canonical.length > 0) {
    throw new PolicyParseError(`assay_policy_decide reads only a root blocklist; ${canonical.join(', ')} belong to the full policy: use assay_check_args`);
  }
  const extra = Object.keys(root).filter((k) => k !== 'blocklist' && k !== 'version');
  if (extra.length > 0) throw new PolicyParseError(`unsupported policy dialect: unknown field ${extra[0]}`);
  if ('version' in root && root['version'] !== '1.0') throw new PolicyParseError(`unsupported dialect version ${JSON.stringify(root['version'])} for a blocklist`);
  if (!isStringList(root['blocklist'])) throw new PolicyParseError('blocklist must be a list of exact tool names');
  return { blocklist: root['blocklist'] };
}
