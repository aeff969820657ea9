import Ajv from 'ajv';
import { POLICY_LIMITS } from '@tollgate/policy';
import { type EvaluationRequest } from './evaluate-policy';
import { type PolicyEvaluator } from './policy-evaluator';
import { PolicyStore } from './policy-store';
import { errorResult, okResult, PolicyToolError, type PolicyToolResult } from './policy-tool-error';

const name = { type: 'string', minLength: 1, maxLength: POLICY_LIMITS.maxToolNameChars };
const policyPath = { type: 'string', minLength: 1, maxLength: 4096, description: 'Path of the policy file, relative to the policy root.' };
// `on_error` is accepted and ignored: a caller cannot change how failures are reported (P4).
const onError = { description: 'Ignored: errors are always reported the same way.' };

/** The three self-verification tools (source 001). */
export const POLICY_TOOLS = [
  {
    name: 'assay_check_args',
    description: 'Checks a tool call\'s arguments against a policy (tools.allow/deny, the tool\'s JSON Schema, enforcement). Returns {allowed, violations, suggested_fix}.',
    inputSchema: {
      type: 'object', additionalProperties: false, required: ['tool', 'arguments', 'policy'],
      properties: { tool: name, arguments: { type: 'object' }, policy: policyPath, on_error: onError },
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'assay_check_sequence',
    description: 'Checks whether next_tool may follow the call history under the policy\'s sequence rules. Returns {allowed, violations, suggested_fix}.',
    inputSchema: {
      type: 'object', additionalProperties: false, required: ['history', 'next_tool', 'policy'],
      properties: { history: { type: 'array', items: name, maxItems: POLICY_LIMITS.maxHistory }, next_tool: name, policy: policyPath, on_error: onError },
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
  {
    name: 'assay_policy_decide',
    description: 'Exact-name check against a policy\'s compatibility root blocklist. Does not read tools.allow/deny: use assay_check_args for full evaluation.',
    inputSchema: {
      type: 'object', additionalProperties: false, required: ['tool', 'policy'],
      properties: { tool: name, policy: policyPath, on_error: onError },
    },
    annotations: { readOnlyHint: true, openWorldHint: false },
  },
] as const;

export type PolicyToolName = (typeof POLICY_TOOLS)[number]['name'];
export const POLICY_TOOL_NAMES = new Set<string>(POLICY_TOOLS.map((t) => t.name));

const ajv = new Ajv({ allErrors: false, coerceTypes: false, strict: false });
const validators = new Map(POLICY_TOOLS.map((t) => [t.name as string, ajv.compile(t.inputSchema)]));

export interface PolicyToolsOptions {
  /** Each evaluation (reading the file included) must finish within this. */
  timeoutMs: number;
}

/**
 * Serves the policy tools over one policy root. Every failure is a P4 result;
 * nothing internal (paths, stack traces, parser internals) reaches the caller.
 */
export class PolicyToolsService {
  private readonly store: PolicyStore;
  private inFlight = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(
    root: string,
    private readonly evaluator: PolicyEvaluator,
    private readonly options: PolicyToolsOptions,
  ) {
    this.store = new PolicyStore(root);
  }

  async call(tool: string, args: unknown): Promise<PolicyToolResult> {
    this.inFlight++;
    try {
      return await this.dispatch(tool, args);
    } finally {
      if (--this.inFlight === 0) for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  /** Resolves once no call is running (a stdio server finishes its answers before exiting). */
  idle(): Promise<void> {
    return this.inFlight === 0 ? Promise.resolve() : new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private async dispatch(tool: string, args: unknown): Promise<PolicyToolResult> {
    const validate = validators.get(tool);
    // A valid tools/call with missing or malformed arguments is the fixed outer failure (P4), never a detailed error.
    if (!validate || !validate(args ?? {})) return errorResult('E_INTERNAL', '');
    const a = args as Record<string, unknown>;
    const deadline = Date.now() + this.options.timeoutMs;
    try {
      const text = await withTimeout(this.store.read(a['policy'] as string), this.options.timeoutMs);
      const req: EvaluationRequest =
        tool === 'assay_check_args' ? { kind: 'check_args', policyText: text, tool: a['tool'] as string, arguments: a['arguments'] as Record<string, unknown> }
          : tool === 'assay_check_sequence' ? { kind: 'check_sequence', policyText: text, history: a['history'] as string[], nextTool: a['next_tool'] as string }
            : { kind: 'decide', policyText: text, tool: a['tool'] as string };
      const res = await this.evaluator.evaluate(req, Math.max(1, deadline - Date.now()));
      if (res === 'timeout') return errorResult('E_TIMEOUT', '');
      if (!res.ok) return errorResult(res.code, res.message);
      return okResult(res.value);
    } catch (e) {
      if (e === TIMED_OUT) return errorResult('E_TIMEOUT', '');
      if (e instanceof PolicyToolError) return errorResult(e.code, e.message);
      return errorResult('E_INTERNAL', '');
    }
  }

  close(): Promise<void> {
    return this.evaluator.close();
  }
}

const TIMED_OUT = Symbol('timed out');

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([p, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(TIMED_OUT), ms)))]).finally(() => clearTimeout(timer));
}
