import { createHash } from 'node:crypto';
import { checkArgs, checkSequence, parseBlocklist, parsePolicy, type Policy, PolicyParseError, PolicySchemas, policyDecide } from '@tollgate/policy';

export type EvaluationRequest =
  | { kind: 'check_args'; policyText: string; tool: string; arguments: Record<string, unknown> }
  | { kind: 'check_sequence'; policyText: string; history: string[]; nextTool: string }
  | { kind: 'decide'; policyText: string; tool: string };

export type EvaluationResponse = { ok: true; value: Record<string, unknown> } | { ok: false; code: 'E_POLICY_PARSE' | 'E_INTERNAL'; message: string };

/** Compiled policies by content hash: a policy is parsed and its schemas compiled once. */
const compiled = new Map<string, { policy: Policy; schemas: PolicySchemas }>();
const CACHE_SIZE = 64;

function compile(text: string): { policy: Policy; schemas: PolicySchemas } {
  const key = createHash('sha256').update(text).digest('hex');
  let c = compiled.get(key);
  if (!c) {
    const policy = parsePolicy(text);
    c = { policy, schemas: new PolicySchemas(policy) };
    if (compiled.size >= CACHE_SIZE) compiled.delete(compiled.keys().next().value!);
    compiled.set(key, c);
  }
  return c;
}

/** Evaluates one request. Parse errors carry a safe message; anything unexpected becomes E_INTERNAL (no detail). */
export function evaluatePolicy(req: EvaluationRequest): EvaluationResponse {
  try {
    switch (req.kind) {
      case 'check_args': {
        const { policy, schemas } = compile(req.policyText);
        return { ok: true, value: { ...checkArgs(policy, schemas, req.tool, req.arguments) } };
      }
      case 'check_sequence':
        return { ok: true, value: { ...checkSequence(compile(req.policyText).policy, req.history, req.nextTool) } };
      case 'decide':
        return { ok: true, value: { ...policyDecide(parseBlocklist(req.policyText), req.tool) } };
    }
  } catch (e) {
    if (e instanceof PolicyParseError) return { ok: false, code: 'E_POLICY_PARSE', message: e.message };
    return { ok: false, code: 'E_INTERNAL', message: 'Tool execution failed' };
  }
}
