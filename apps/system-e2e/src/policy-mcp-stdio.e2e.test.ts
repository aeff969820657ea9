/**
 * P1–P5: the real tollgate-policy-mcp binary over stdio, spoken to
 * line by line as a desktop MCP client would.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio';
import { WORKSPACE_ROOT } from '@tollgate/testing';

jest.setTimeout(60_000);

describe('tollgate-policy-mcp over stdio (P4, P5)', () => {
  let dir: string;
  let child: ChildProcessWithoutNullStreams;
  const lines: Record<string, unknown>[] = [];
  let waiters: (() => void)[] = [];

  const send = (line: string) => child.stdin.write(`${line}\n`);
  const request = (id: number, method: string, params?: unknown) => send(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params ? { params } : {}) }));
  async function responseTo(id: number, timeoutMs = 15_000): Promise<Record<string, unknown>> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = lines.find((l) => l['id'] === id);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no response to ${id}; got ${JSON.stringify(lines)}`);
      await new Promise<void>((resolve) => {
        waiters.push(resolve);
        setTimeout(resolve, 200);
      });
    }
  }
  const payloadOf = (r: Record<string, unknown>) => JSON.parse(((r['result'] as { content: { text: string }[] }).content[0]!.text)) as Record<string, unknown>;
  const call = async (id: number, name: string, args: unknown) => {
    request(id, 'tools/call', { name, arguments: args });
    return responseTo(id);
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'policy-mcp-'));
    writeFileSync(path.join(dir, 'support.yaml'), [
      'version: "2.0"', 'tools:', '  deny: ["*delete*"]', 'schemas:', '  create_ticket:', '    type: object', '    additionalProperties: false',
      '    properties:', '      title: { type: string, maxLength: 10 }', '    required: [title]',
      // A pattern that backtracks catastrophically: evaluation must be cut off, not hang the server.
      '  slow_tool:', '    type: object', '    properties:', '      code: { type: string, pattern: "^(a+)+$" }',
    ].join('\n'));
    writeFileSync(path.join(os.tmpdir(), `outside-${path.basename(dir)}.yaml`), 'version: "2.0"\n');
    symlinkSync(path.join(os.tmpdir(), `outside-${path.basename(dir)}.yaml`), path.join(dir, 'escape.yaml'));
    child = spawn(process.execPath, [path.join(WORKSPACE_ROOT, 'apps/policy-mcp/bin/tollgate-policy-mcp.js'), '--policy-root', dir, '--timeout-ms', '1500'], { cwd: WORKSPACE_ROOT });
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      let i;
      while ((i = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 1);
        if (line.trim()) lines.push(JSON.parse(line));
      }
      const w = waiters;
      waiters = [];
      w.forEach((f) => f());
    });
  });

  afterAll(() => {
    child?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('ignores an invalid JSON line and answers the next request exactly once', async () => {
    send('{"jsonrpc": "2.0", this is not json');
    request(1, 'initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'e2e', version: '1' } });
    const init = await responseTo(1);
    expect(init['result']).toMatchObject({ serverInfo: { name: 'tollgate-policy' } });
    send(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
    await new Promise((r) => setTimeout(r, 300));
    expect(lines).toHaveLength(1);
  });

  it('answers an unknown method with -32601', async () => {
    request(2, 'policies/everything');
    expect(await responseTo(2)).toMatchObject({ error: { code: -32601 } });
  });

  it('lists the three tools and evaluates a policy', async () => {
    request(3, 'tools/list');
    expect(((await responseTo(3))['result'] as { tools: { name: string }[] }).tools.map((t) => t.name)).toEqual(['assay_check_args', 'assay_check_sequence', 'assay_policy_decide']);
    const r = await call(4, 'assay_check_args', { tool: 'create_ticket', arguments: { title: 'A long title here', x: 1 }, policy: 'support.yaml' });
    expect(payloadOf(r)).toMatchObject({ allowed: false, suggested_fix: { title: 'A long tit' } });
  });

  it('answers malformed arguments with the fixed E_INTERNAL payload, and path escapes with E_PERMISSION_DENIED', async () => {
    const fixed = { allowed: false, error: { code: 'E_INTERNAL', message: 'Tool execution failed' } };
    const r = await call(5, 'assay_check_args', { tool: 'create_ticket', policy: 'support.yaml', on_error: 'allow' });
    expect((r['result'] as { isError: boolean }).isError).toBe(true);
    expect(payloadOf(r)).toEqual(fixed);
    expect(payloadOf(await call(6, 'assay_check_sequence', { history: 'not-a-list', next_tool: 'x', policy: 'support.yaml' }))).toEqual(fixed);
    expect(payloadOf(await call(7, 'assay_policy_decide', { tool: 'x', policy: '../etc/passwd' }))).toMatchObject({ allowed: false, error: { code: 'E_PERMISSION_DENIED' } });
    expect(payloadOf(await call(8, 'assay_policy_decide', { tool: 'x', policy: 'escape.yaml' }))).toMatchObject({ allowed: false, error: { code: 'E_PERMISSION_DENIED' } });
  });

  it('cuts off an evaluation that runs past the limit with E_TIMEOUT, and keeps serving', async () => {
    const started = Date.now();
    const r = await call(9, 'assay_check_args', { tool: 'slow_tool', arguments: { code: `${'a'.repeat(40)}!` }, policy: 'support.yaml' });
    expect(payloadOf(r)).toEqual({ allowed: false, error: { code: 'E_TIMEOUT', message: 'Tool execution timed out' } });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(payloadOf(await call(10, 'assay_check_args', { tool: 'bulk_delete', arguments: {}, policy: 'support.yaml' }))).toMatchObject({ allowed: false, violations: [{ constraint: 'tools.deny: *delete*' }] });
  });
});

/** The same binary serves a client pinned to 2026-07-28 (the official SDK v2 client over stdio). */
describe('tollgate-policy-mcp over stdio, 2026-07-28', () => {
  it('connects through server/discover, lists the policy tools and answers a check', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'policy-mcp-modern-'));
    writeFileSync(path.join(dir, 'support.yaml'), ['version: "2.0"', 'tools:', '  deny: ["*delete*"]'].join('\n'));
    const client = new ModernClient({ name: 'e2e-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    try {
      await client.connect(new ModernStdio({ command: process.execPath, args: [path.join(WORKSPACE_ROOT, 'apps/policy-mcp/bin/tollgate-policy-mcp.js'), '--policy-root', dir], cwd: WORKSPACE_ROOT }));
      expect(client.getProtocolEra()).toBe('modern');
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['assay_check_args', 'assay_check_sequence', 'assay_policy_decide']);
      const r = await client.callTool({ name: 'assay_check_args', arguments: { tool: 'bulk_delete', arguments: {}, policy: 'support.yaml' } });
      const text = (r.content as { type: string; text: string }[])[0]!.text;
      expect(JSON.parse(text)).toMatchObject({ allowed: false, violations: [{ constraint: 'tools.deny: *delete*' }] });
    } finally {
      await client.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
