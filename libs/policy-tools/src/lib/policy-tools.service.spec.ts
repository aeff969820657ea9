import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync, chmodSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { POLICY_LIMITS } from '@tollgate/policy';
import { InlineEvaluator } from './policy-evaluator';
import { PolicyToolsService } from './policy-tools.service';

// P4 and the policy root: every failure is {"allowed":false,"error":{code,message}} in the first text content, isError true.
describe('policy tools over a policy root (P1–P4)', () => {
  let base: string;
  let root: string;
  let tools: PolicyToolsService;
  const payload = (r: { content: { text: string }[] }) => JSON.parse(r.content[0]!.text) as { allowed: boolean; error?: { code: string; message: string } };

  beforeAll(() => {
    base = mkdtempSync(path.join(os.tmpdir(), 'policy-root-'));
    root = path.join(base, 'root');
    mkdirSync(path.join(root, 'team'), { recursive: true });
    writeFileSync(path.join(base, 'outside.yaml'), 'version: "2.0"\n');
    writeFileSync(path.join(root, 'team', 'ok.yaml'), 'version: "2.0"\ntools:\n  deny: ["drop_*"]\nsequences:\n  - type: before\n    first: a\n    then: b\n');
    writeFileSync(path.join(root, 'block.yaml'), 'blocklist: [shutdown]\n');
    writeFileSync(path.join(root, 'broken.yaml'), 'tools: [unclosed\n');
    writeFileSync(path.join(root, 'huge.yaml'), `# ${'x'.repeat(POLICY_LIMITS.maxPolicyBytes)}\n`);
    writeFileSync(path.join(root, 'locked.yaml'), 'version: "2.0"\n');
    chmodSync(path.join(root, 'locked.yaml'), 0o000);
    mkdirSync(path.join(root, 'a-directory.yaml'));
    symlinkSync(path.join(base, 'outside.yaml'), path.join(root, 'link-out.yaml'));
    symlinkSync(path.join(root, 'team', 'ok.yaml'), path.join(root, 'link-in.yaml'));
    tools = new PolicyToolsService(root, new InlineEvaluator(), { timeoutMs: 2000 });
  });

  afterAll(() => rmSync(base, { recursive: true, force: true }));

  const args = (policy: string) => ({ tool: 'drop_table', arguments: {}, policy });

  it('evaluates a policy inside the root, following a symlink that stays inside', async () => {
    for (const p of ['team/ok.yaml', 'link-in.yaml', './team/../team/ok.yaml']) {
      const r = await tools.call('assay_check_args', args(p));
      expect(r.isError).toBeUndefined();
      expect(r.structuredContent).toMatchObject({ allowed: false, violations: [{ constraint: 'tools.deny: drop_*' }], suggested_fix: null });
    }
    expect((await tools.call('assay_check_sequence', { history: [], next_tool: 'b', policy: 'team/ok.yaml' })).structuredContent).toMatchObject({ allowed: false });
    expect((await tools.call('assay_policy_decide', { tool: 'shutdown', policy: 'block.yaml' })).structuredContent).toEqual({ allowed: false, reason: expect.any(String), match: 'shutdown' });
  });

  it.each([['../outside.yaml'], ['<absolute>'], ['link-out.yaml'], ['team/../../outside.yaml']])('refuses %s with E_PERMISSION_DENIED', async (p) => {
    const r = await tools.call('assay_check_args', args(p === '<absolute>' ? path.join(base, 'outside.yaml') : p));
    expect(r.isError).toBe(true);
    expect(payload(r)).toEqual({ allowed: false, error: { code: 'E_PERMISSION_DENIED', message: expect.any(String) } });
    expect(r.content[0]!.text).not.toContain(base);
  });

  it('answers E_POLICY_NOT_FOUND, E_POLICY_READ (not a file, too big, unreadable) and E_POLICY_PARSE', async () => {
    expect(payload(await tools.call('assay_check_args', args('missing.yaml'))).error?.code).toBe('E_POLICY_NOT_FOUND');
    expect(payload(await tools.call('assay_check_args', args('a-directory.yaml'))).error?.code).toBe('E_POLICY_READ');
    expect(payload(await tools.call('assay_check_args', args('huge.yaml'))).error).toEqual({ code: 'E_POLICY_READ', message: `The policy file is larger than ${POLICY_LIMITS.maxPolicyBytes} bytes.` });
    // Root reads anything; as any other user the unreadable file is E_POLICY_READ.
    if (process.getuid?.() !== 0) expect(payload(await tools.call('assay_check_args', args('locked.yaml'))).error?.code).toBe('E_POLICY_READ');
    expect(payload(await tools.call('assay_check_args', args('broken.yaml'))).error?.code).toBe('E_POLICY_PARSE');
    expect(payload(await tools.call('assay_policy_decide', { tool: 'x', policy: 'team/ok.yaml' })).error?.code).toBe('E_POLICY_PARSE');
  });

  it('turns missing or malformed arguments into the fixed E_INTERNAL payload, whatever on_error says', async () => {
    const fixed = { allowed: false, error: { code: 'E_INTERNAL', message: 'Tool execution failed' } };
    for (const bad of [undefined, {}, { tool: 'x', policy: 'team/ok.yaml' }, { tool: 1, arguments: {}, policy: 'team/ok.yaml' }, { tool: 'x', arguments: [], policy: 'team/ok.yaml' }, { tool: 'x', arguments: {}, policy: 'team/ok.yaml', extra: 1 }]) {
      const r = await tools.call('assay_check_args', bad);
      expect(r.isError).toBe(true);
      expect(JSON.parse(r.content[0]!.text)).toEqual(fixed);
    }
    expect(payload(await tools.call('assay_check_sequence', { history: Array(POLICY_LIMITS.maxHistory + 1).fill('a'), next_tool: 'b', policy: 'team/ok.yaml' }))).toEqual(fixed);
    expect(payload(await tools.call('assay_check_args', { tool: 'x', policy: 'missing.yaml', on_error: 'allow' }))).toEqual(fixed);
    const ignored = await tools.call('assay_check_args', { ...args('missing.yaml'), on_error: 'allow' });
    expect(payload(ignored).error?.code).toBe('E_POLICY_NOT_FOUND');
    expect(payload(await tools.call('no_such_tool', {}))).toEqual(fixed);
  });
});
