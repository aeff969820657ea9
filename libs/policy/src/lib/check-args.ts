import Ajv, { type ErrorObject, type ValidateFunction } from 'ajv';
import { type Policy, PolicyParseError } from './policy-document';
import { POLICY_LIMITS } from './policy-limits';
import { firstMatch } from './wildcard';

export interface Violation {
  constraint: string;
  suggestion: string;
}

/** The shape of assay_check_args and assay_check_sequence (P1, P2); `warnings` adds what allowed calls should still know. */
export interface CheckResult {
  allowed: boolean;
  violations: Violation[];
  suggested_fix: Record<string, unknown> | null;
  warnings: string[];
}

export type Arguments = Record<string, unknown>;

/** The tool-name part of a policy decision: deny first, then the allow list. */
export function toolDecision(policy: Policy, tool: string): Violation | undefined {
  const denied = firstMatch(policy.deny, tool);
  if (denied) return { constraint: `tools.deny: ${denied.source}`, suggestion: `"${tool}" is denied by this policy; use another tool.` };
  if (policy.allow && !firstMatch(policy.allow, tool)) {
    return { constraint: 'tools.allow', suggestion: `"${tool}" matches no entry of tools.allow; use an allowed tool or ask the policy owner to add it.` };
  }
  return undefined;
}

const pointerEscape = (s: string) => s.replace(/~/g, '~0').replace(/\//g, '~1');

/**
 * Compiles a policy's argument schemas once (JSON Schema, no type coercion,
 * local `$ref` only: `#/schemas/$defs/x` or `#/$defs/x`).
 */
export class PolicySchemas {
  private readonly ajv = new Ajv({ allErrors: true, coerceTypes: false, useDefaults: false, strict: false, validateFormats: false });
  private readonly validators = new Map<string, ValidateFunction>();
  private static readonly ROOT = 'urn:tollgate:policy';

  constructor(private readonly policy: Policy) {
    try {
      this.ajv.addSchema({ $id: PolicySchemas.ROOT, $defs: policy.defs, schemas: { ...policy.schemas, $defs: policy.defs } });
      for (const tool of Object.keys(policy.schemas)) this.validator(tool);
    } catch (e) {
      throw new PolicyParseError(`a schema does not compile: ${e instanceof Error ? e.message.split('\n')[0] : 'invalid schema'}`);
    }
  }

  has(tool: string): boolean {
    return Object.prototype.hasOwnProperty.call(this.policy.schemas, tool);
  }

  validator(tool: string): ValidateFunction {
    let v = this.validators.get(tool);
    if (!v) {
      v = this.ajv.getSchema(`${PolicySchemas.ROOT}#/schemas/${pointerEscape(tool)}`);
      if (!v) throw new PolicyParseError(`schemas.${tool} does not compile`);
      this.validators.set(tool, v);
    }
    return v;
  }
}

function describe(tool: string, e: ErrorObject): Violation {
  const at = e.instancePath || '/';
  const p = e.params as Record<string, unknown>;
  const constraint = `schemas.${tool}: ${at} ${e.keyword}`;
  switch (e.keyword) {
    case 'additionalProperties':
      return { constraint: `schemas.${tool}: ${at} additionalProperties`, suggestion: `remove the argument "${String(p['additionalProperty'])}": the schema does not allow it` };
    case 'required':
      return { constraint, suggestion: `add the required argument "${String(p['missingProperty'])}"` };
    case 'maximum': case 'exclusiveMaximum': case 'minimum': case 'exclusiveMinimum':
      return { constraint, suggestion: `${at} ${e.message ?? ''}`.trim() };
    case 'maxLength': case 'minLength': case 'pattern': case 'type': case 'enum': case 'const':
      return { constraint, suggestion: `${at} ${e.message ?? 'is invalid'}${e.keyword === 'enum' ? `: ${JSON.stringify(p['allowedValues'])}` : ''}` };
    default:
      return { constraint, suggestion: `${at} ${e.message ?? 'is invalid'}` };
  }
}

function pathOf(pointer: string): string[] {
  return pointer === '' ? [] : pointer.slice(1).split('/').map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/**
 * A corrected argument object where one can be computed from the errors —
 * an unknown property removed, a number clamped to its bound, a string or
 * list cut to its maximum — and only if the result then passes. Else null.
 */
export function suggestFix(args: Arguments, errors: ErrorObject[], validate: ValidateFunction): Arguments | null {
  const fixed = structuredClone(args);
  let changed = false;
  for (const e of errors) {
    const path = pathOf(e.instancePath);
    let parent: unknown = fixed;
    for (const k of path.slice(0, -1)) parent = (parent as Record<string, unknown>)?.[k];
    const key = path[path.length - 1];
    const p = e.params as Record<string, unknown>;
    const holder = key === undefined ? undefined : (parent as Record<string, unknown>);
    const value = key === undefined ? fixed : holder?.[key];
    if (e.keyword === 'additionalProperties' && typeof value === 'object' && value !== null) {
      delete (value as Record<string, unknown>)[String(p['additionalProperty'])];
      changed = true;
    } else if (holder && key !== undefined && typeof value === 'number' && (e.keyword === 'maximum' || e.keyword === 'minimum')) {
      holder[key] = p['limit'];
      changed = true;
    } else if (holder && key !== undefined && typeof value === 'string' && e.keyword === 'maxLength') {
      holder[key] = [...value].slice(0, p['limit'] as number).join('');
      changed = true;
    } else if (holder && key !== undefined && Array.isArray(value) && e.keyword === 'maxItems') {
      holder[key] = value.slice(0, p['limit'] as number);
      changed = true;
    }
  }
  return changed && validate(fixed) ? fixed : null;
}

function capped(violations: Violation[]): Violation[] {
  if (violations.length <= POLICY_LIMITS.maxViolations) return violations;
  return [...violations.slice(0, POLICY_LIMITS.maxViolations - 1), { constraint: 'more', suggestion: `${violations.length - POLICY_LIMITS.maxViolations + 1} more violations not listed` }];
}

/** P1: full, argument-aware policy evaluation of one call. */
export function checkArgs(policy: Policy, schemas: PolicySchemas, tool: string, args: Arguments): CheckResult {
  const warnings = [...policy.warnings];
  const refused = toolDecision(policy, tool);
  if (refused) return { allowed: false, violations: [refused], suggested_fix: null, warnings };
  if (!schemas.has(tool)) {
    if (policy.unconstrained === 'deny') {
      return { allowed: false, violations: [{ constraint: 'enforcement.unconstrained_tools: deny', suggestion: `add schemas.${tool} to the policy to allow this tool` }], suggested_fix: null, warnings };
    }
    if (policy.unconstrained === 'warn') warnings.push(`E_TOOL_UNCONSTRAINED: "${tool}" is allowed but has no argument schema`);
    return { allowed: true, violations: [], suggested_fix: null, warnings };
  }
  const validate = schemas.validator(tool);
  if (validate(args)) return { allowed: true, violations: [], suggested_fix: null, warnings };
  const errors = validate.errors ?? [];
  return { allowed: false, violations: capped(errors.map((e) => describe(tool, e))), suggested_fix: suggestFix(args, errors, validate), warnings };
}
