import { type CheckResult, toolDecision, type Violation } from './check-args';
import { type Policy, type SequenceRule } from './policy-document';

/**
 * One rule against the trace the next call would make (`history` + `next`).
 * A rule whose window is still open is not yet a violation.
 */
export function sequenceViolation(rule: SequenceRule, history: readonly string[], next: string): Violation | undefined {
  const trace = [...history, next];
  switch (rule.type) {
    case 'require':
      // A precondition for every other call: the required tool comes first.
      return next !== rule.tool && !history.includes(rule.tool)
        ? { constraint: `sequences.require: ${rule.tool}`, suggestion: `call "${rule.tool}" before "${next}"` }
        : undefined;
    case 'before':
      return next === rule.then && !history.includes(rule.first)
        ? { constraint: `sequences.before: ${rule.first} → ${rule.then}`, suggestion: `call "${rule.first}" before "${rule.then}"` }
        : undefined;
    case 'immediately_before':
      return next === rule.then && history[history.length - 1] !== rule.first
        ? { constraint: `sequences.immediately_before: ${rule.first} → ${rule.then}`, suggestion: `call "${rule.first}" directly before "${rule.then}"` }
        : undefined;
    case 'after':
      for (let i = 0; i < trace.length; i++) {
        if (trace[i] !== rule.trigger) continue;
        const window = trace.slice(i + 1, i + 1 + rule.within);
        if (window.length === rule.within && !window.includes(rule.then)) {
          return { constraint: `sequences.after: ${rule.trigger} → ${rule.then} within ${rule.within}`, suggestion: `"${rule.then}" must follow "${rule.trigger}" within ${rule.within} calls; call "${rule.then}" now` };
        }
      }
      return undefined;
    case 'eventually':
      return trace.length >= rule.within && !trace.slice(0, rule.within).includes(rule.tool)
        ? { constraint: `sequences.eventually: ${rule.tool} within ${rule.within}`, suggestion: `"${rule.tool}" had to be called within the first ${rule.within} calls` }
        : undefined;
    case 'max_calls': {
      const n = trace.filter((t) => t === rule.tool).length;
      return n > rule.max ? { constraint: `sequences.max_calls: ${rule.tool} ≤ ${rule.max}`, suggestion: `"${rule.tool}" may be called at most ${rule.max} times` } : undefined;
    }
    case 'never_after': {
      const at = trace.indexOf(rule.trigger);
      return at >= 0 && trace.slice(at + 1).includes(rule.forbidden)
        ? { constraint: `sequences.never_after: ${rule.trigger} ⊣ ${rule.forbidden}`, suggestion: `"${rule.forbidden}" may not be called once "${rule.trigger}" has been` }
        : undefined;
    }
  }
}

/** P2: may `next` be called after `history`? Tool filtering applies too; sequence rules never suggest an argument fix. */
export function checkSequence(policy: Policy, history: readonly string[], next: string): CheckResult {
  const violations: Violation[] = [];
  const refused = toolDecision(policy, next);
  if (refused) violations.push(refused);
  for (const rule of policy.sequences) {
    const v = sequenceViolation(rule, history, next);
    if (v) violations.push(v);
  }
  return { allowed: violations.length === 0, violations, suggested_fix: null, warnings: [...policy.warnings] };
}
