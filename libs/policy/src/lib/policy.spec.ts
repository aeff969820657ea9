import { readFileSync } from 'node:fs';
import path from 'node:path';
import fc from 'fast-check';
import { checkArgs, PolicySchemas } from './check-args';
import { checkSequence, sequenceViolation } from './check-sequence';
import { parseBlocklist, parsePolicy, PolicyParseError } from './policy-document';
import { policyDecide } from './policy-decide';

const example = (name: string) => readFileSync(path.join(__dirname, '../../examples', name), 'utf8');
const load = (text: string) => {
  const policy = parsePolicy(text);
  return { policy, schemas: new PolicySchemas(policy) };
};

describe('assay_check_args evaluation (P1)', () => {
  const { policy, schemas } = load(example('support-agent.yaml'));
  const check = (tool: string, args: Record<string, unknown>) => checkArgs(policy, schemas, tool, args);

  it('allows a call that passes its schema', () => {
    expect(check('create_support_ticket', { title: 'Printer down', priority: 'high' })).toEqual({ allowed: true, violations: [], suggested_fix: null, warnings: [] });
  });

  it('denies by deny pattern before anything else, naming the pattern', () => {
    expect(check('bulk_delete_users', {})).toMatchObject({ allowed: false, violations: [{ constraint: 'tools.deny: *delete*' }], suggested_fix: null });
    expect(check('get_delete_log', {}).violations[0]!.constraint).toBe('tools.deny: *delete*');
    expect(check('bash', {}).violations[0]!.constraint).toBe('tools.deny: *sh');
  });

  it('refuses a tool outside the allow list', () => {
    expect(check('update_customer', {})).toMatchObject({ allowed: false, violations: [{ constraint: 'tools.allow' }] });
  });

  it('suggests a fix: unknown property removed, number clamped, string cut', () => {
    const r = check('create_support_ticket', { title: 'x'.repeat(90), estimate_hours: 99, urgent: true });
    expect(r.allowed).toBe(false);
    expect(r.violations.map((v) => v.constraint).sort()).toEqual([
      'schemas.create_support_ticket: / additionalProperties', 'schemas.create_support_ticket: /estimate_hours maximum', 'schemas.create_support_ticket: /title maxLength',
    ]);
    expect(r.suggested_fix).toEqual({ title: 'x'.repeat(80), estimate_hours: 40 });
  });

  it('gives no fix when none can be computed', () => {
    expect(check('create_support_ticket', { priority: 'urgent' })).toMatchObject({ allowed: false, suggested_fix: null });
  });

  it('resolves local $defs references', () => {
    expect(check('get_support_ticket', { ticket_id: 'T-42' }).allowed).toBe(true);
    expect(check('get_support_ticket', { ticket_id: '42' })).toMatchObject({ allowed: false, violations: [{ constraint: 'schemas.get_support_ticket: /ticket_id pattern' }] });
  });

  it('never coerces types', () => {
    expect(check('create_support_ticket', { title: 'a', estimate_hours: '3' }).allowed).toBe(false);
  });

  it.each([
    ['allow', true, []],
    ['warn', true, ['E_TOOL_UNCONSTRAINED: "get_customer" is allowed but has no argument schema']],
    ['deny', false, []],
  ])('unconstrained tools in %s mode', (mode, allowed, warnings) => {
    const p = load(example('support-agent.yaml').replace('unconstrained_tools: warn', `unconstrained_tools: ${mode}`));
    const r = checkArgs(p.policy, p.schemas, 'get_customer', { id: 1 });
    expect(r.allowed).toBe(allowed);
    expect(r.warnings).toEqual(warnings);
    if (!allowed) expect(r.violations[0]!.constraint).toBe('enforcement.unconstrained_tools: deny');
  });

  it('property: a suggested fix always passes the policy', () => {
    fc.assert(fc.property(
      fc.record({ title: fc.string({ maxLength: 120 }), estimate_hours: fc.integer({ min: -50, max: 100 }), extra: fc.option(fc.boolean(), { nil: undefined }) }, { requiredKeys: ['title'] }),
      (args) => {
        const r = check('create_support_ticket', JSON.parse(JSON.stringify(args)));
        if (r.suggested_fix) expect(check('create_support_ticket', r.suggested_fix).allowed).toBe(true);
      },
    ));
  });
});

describe('sequence rules (P2)', () => {
  const { policy } = load(example('workflow.yaml'));
  const rule = (type: string) => policy.sequences.find((r) => r.type === type)!;

  it('immediately_before', () => {
    expect(sequenceViolation(rule('immediately_before'), ['open_change_request', 'run_tests'], 'deploy')).toBeUndefined();
    expect(sequenceViolation(rule('immediately_before'), ['run_tests', 'lint'], 'deploy')?.constraint).toBe('sequences.immediately_before: run_tests → deploy');
  });

  it('after … within N: still inside its window is not yet a violation', () => {
    const r = rule('after');
    expect(sequenceViolation(r, ['deploy'], 'lint')).toBeUndefined();
    expect(sequenceViolation(r, ['deploy', 'lint'], 'lint')?.constraint).toBe('sequences.after: deploy → notify_team within 2');
    expect(sequenceViolation(r, ['deploy', 'lint'], 'notify_team')).toBeUndefined();
  });

  it('eventually within N', () => {
    const r = rule('eventually');
    expect(sequenceViolation(r, ['a'], 'b')).toBeUndefined();
    expect(sequenceViolation(r, ['a', 'b'], 'c')?.constraint).toBe('sequences.eventually: open_change_request within 3');
    expect(sequenceViolation(r, ['a', 'open_change_request'], 'c')).toBeUndefined();
  });

  it('never_after', () => {
    const r = rule('never_after');
    expect(sequenceViolation(r, ['edit_config'], 'deploy')).toBeUndefined();
    expect(sequenceViolation(r, ['deploy'], 'edit_config')?.suggestion).toMatch(/may not be called once "deploy"/);
  });

  it('require, before and max_calls', () => {
    const { policy: support } = load(example('support-agent.yaml'));
    const seq = (h: string[], n: string) => checkSequence(support, h, n);
    expect(seq([], 'get_customer').violations.map((v) => v.constraint)).toEqual(['sequences.require: authenticate']);
    expect(seq([], 'authenticate').violations).toEqual([expect.objectContaining({ constraint: 'tools.allow' })]);
    expect(seq(['authenticate'], 'send_email').violations.map((v) => v.constraint)).toEqual(['sequences.before: get_customer → send_email']);
    expect(seq(['authenticate', 'get_customer', 'send_email', 'send_email'], 'send_email').allowed).toBe(true);
    expect(seq(['authenticate', 'get_customer', 'send_email', 'send_email', 'send_email'], 'send_email').violations.map((v) => v.constraint)).toEqual(['sequences.max_calls: send_email ≤ 3']);
  });
});

describe('policy loading (E_POLICY_PARSE)', () => {
  it.each([
    ['not YAML', 'tools: [unclosed'],
    ['a list root', '- a\n- b'],
    ['an unknown field', 'version: "2.0"\nrules: []'],
    ['another version', 'version: "3.0"'],
    ['a remote $ref', 'schemas:\n  t:\n    $ref: "https://example.com/s.json"'],
    ['an unknown rule type', 'sequences:\n  - type: sometimes\n    tool: x'],
    ['a rule field typo', 'sequences:\n  - type: before\n    first: a\n    than: b'],
    ['a blocklist root', 'blocklist: [a]'],
    ['a schema that does not compile', 'schemas:\n  t:\n    type: 12'],
    ['too many aliases', `a: &a [1]\n${Array.from({ length: 120 }, (_, i) => `k${i}: *a`).join('\n')}`],
  ])('refuses %s', (_what, text) => {
    expect(() => new PolicySchemas(parsePolicy(text))).toThrow(PolicyParseError);
  });

  it('reports a deny entry with a * in the middle: it blocks nothing', () => {
    const p = parsePolicy('tools:\n  deny: ["exec*cmd"]');
    expect(p.warnings).toEqual(['tools.deny entry "exec*cmd" has a * in the middle, which is a literal character: it blocks nothing']);
    expect(checkArgs(p, new PolicySchemas(p), 'exec_cmd', {}).allowed).toBe(true);
  });
});

describe('assay_policy_decide dialect (P3)', () => {
  it('checks exact names against the root blocklist', () => {
    const list = parseBlocklist(example('blocklist.yaml'));
    expect(policyDecide(list, 'drop_database')).toEqual({ allowed: false, reason: 'the tool is on the policy blocklist', match: 'drop_database' });
    expect(policyDecide(list, 'drop_*')).toMatchObject({ allowed: true });
  });

  it.each([
    ['canonical tools', 'tools:\n  deny: [x]'],
    ['canonical allow', 'allow: [x]\nblocklist: []'],
    ['an unsupported dialect', 'version: "2.0"\nblocklist: [x]'],
    ['an invalid root', '"just a string"'],
    ['a blocklist of patterns in a map', 'blocklist: {a: 1}'],
  ])('refuses %s with E_POLICY_PARSE', (_w, text) => {
    expect(() => parseBlocklist(text)).toThrow(expect.objectContaining({ code: 'E_POLICY_PARSE' }));
  });
});
