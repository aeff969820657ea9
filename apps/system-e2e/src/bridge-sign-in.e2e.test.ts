/**
 * G2: the real tollgate-mcp bridge process (stdio) against the
 * gateway (embedded mode), driven by the official SDK Client as a desktop MCP
 * client would: not signed in → approve on the gateway's page → tools listed
 * (tools/list_changed) → assay_sign_in says connected; another window; an
 * expired sign-in; settings and lock failures as JSON-RPC errors.
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as ModernClient } from '@modelcontextprotocol/client';
import { StdioClientTransport as ModernStdio } from '@modelcontextprotocol/client/stdio';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { type CallToolResult, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { Client as PgClient } from 'pg';
import { freePort, type RunningProcess, startProcess, startTsProcess, waitFor, WORKSPACE_ROOT } from '@tollgate/testing';

jest.setTimeout(180_000);

const CONNECTED = 'Assay is connected. Its tools are listed here.';
const SIGN_IN_TTL_MS = 5000;

describe('tollgate-mcp: local stdio bridge and device sign-in (G2)', () => {
  let system: RunningProcess;
  let dataDir: string;
  let configRoot: string;
  let base: string;
  let pgPort: number;
  let demo: { ownerKey: string; adminToken: string };
  const clients: Client[] = [];

  async function bridge(configDir: string): Promise<Client> {
    const client = new Client({ name: 'desktop-client', version: '1.0.0' });
    await client.connect(new StdioClientTransport({
      command: process.execPath,
      args: [path.join(WORKSPACE_ROOT, 'apps/mcp-bridge/bin/tollgate-mcp.js'), '--gateway', base, '--url', 'demo', '--config-dir', configDir, '--device-name', 'e2e laptop'],
      cwd: WORKSPACE_ROOT,
      stderr: 'pipe',
    }));
    clients.push(client);
    return client;
  }
  const text = (r: unknown) => ((r as CallToolResult).content[0] as { text: string }).text;
  const signIn = async (c: Client) => text(await c.callTool({ name: 'assay_sign_in', arguments: {} }));
  const linkIn = (t: string) => t.match(/http:\/\/\S+\/signin\/approve\/[0-9a-f-]{36}/)?.[0];
  const approve = (link: string, ownerKey: string) =>
    fetch(link, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ ownerKey }).toString() });

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-bridge-'));
    chmodSync(dataDir, 0o755);
    configRoot = mkdtempSync(path.join(os.tmpdir(), 'tollgate-bridge-config-'));
    const port = await freePort();
    pgPort = await freePort();
    system = startTsProcess('embedded', 'apps/embedded/src/main.ts', [], { DEMO_MONEY: 'false',
      PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), DATA_DIR: dataDir, LOG_LEVEL: 'warn', GATEWAY_SIGNIN_TTL_MS: String(SIGN_IN_TTL_MS),
    });
    await system.waitForOutput(/Tollgate is running/, 120_000);
    demo = JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8'));
    base = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await system?.stop();
    rmSync(dataDir, { recursive: true, force: true });
    rmSync(configRoot, { recursive: true, force: true });
  });

  it('lists only assay_sign_in, then after the owner approves, lists the gateway tools and says connected', async () => {
    const dir = path.join(configRoot, 'a');
    const c = await bridge(dir);
    expect((await c.listTools()).tools.map((t) => t.name)).toEqual(['assay_sign_in']);
    const notYet = await c.callTool({ name: 'search_tools', arguments: { query: 'x' } });
    expect(notYet.isError).toBe(true);

    let changed = 0;
    c.setNotificationHandler(ToolListChangedNotificationSchema, async () => void changed++);
    const first = await signIn(c);
    const link = linkIn(first)!;
    expect(first).toMatch(/approve this device/);
    expect(link).toBeDefined();
    // The same window asking again gets the same link: no second sign-in.
    expect(linkIn(await signIn(c))).toBe(link);

    // Another window sharing the settings is told to approve in the first one.
    const other = await bridge(dir);
    expect(await signIn(other)).toMatch(/^Another window is already signing in/);

    const pageHtml = await (await fetch(link)).text();
    const code = first.match(/code ([A-Z0-9]{4}-[A-Z0-9]{4})/)![1]!;
    expect(pageHtml).toContain(code);
    expect(pageHtml).toContain('e2e laptop');
    expect((await approve(link, 'tgo_wrong')).status).toBe(403);
    const ok = await approve(link, demo.ownerKey);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toMatch(/Device approved/);

    await waitFor('tools/list_changed', () => changed > 0, 20_000, 100);
    const names = (await c.listTools()).tools.map((t) => t.name);
    // The demo URL uses full discovery: the catalog's tools themselves are listed (the hosted tools stay callable).
    expect(names).toEqual(expect.arrayContaining(['word_count', 'reverse_text', 'assay_sign_in']));
    expect(await signIn(c)).toBe(CONNECTED);
    const found = (await c.callTool({ name: 'search_tools', arguments: { query: 'count words', detail: 'names' } })) as CallToolResult;
    expect((found.structuredContent as { results: { name: string }[] }).results[0]!.name).toBe('word_count');

    const saved = path.join(dir, 'credentials.json');
    expect(statSync(saved).mode & 0o777).toBe(0o600);
    expect(JSON.parse(readFileSync(saved, 'utf8')).credential).toMatch(/^tg_/);
    // The link is spent: the page now says the sign-in has ended.
    expect((await fetch(link)).status).toBe(410);

    // A new process (the client restarted) resumes from the saved credential.
    const restarted = await bridge(dir);
    expect((await restarted.listTools()).tools.map((t) => t.name)).toContain('word_count');
    expect(await signIn(restarted)).toBe(CONNECTED);
  });

  it('serves a desktop client pinned to 2026-07-28 the same tools, resumed from the saved credential', async () => {
    const modern = new ModernClient({ name: 'desktop-client-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    try {
      await modern.connect(new ModernStdio({
        command: process.execPath,
        args: [path.join(WORKSPACE_ROOT, 'apps/mcp-bridge/bin/tollgate-mcp.js'), '--gateway', base, '--url', 'demo', '--config-dir', path.join(configRoot, 'a'), '--device-name', 'e2e laptop'],
        cwd: WORKSPACE_ROOT,
      }));
      expect(modern.getProtocolEra()).toBe('modern');
      expect((await modern.listTools()).tools.map((t) => t.name)).toEqual(expect.arrayContaining(['word_count', 'assay_sign_in']));
      const counted = await modern.callTool({ name: 'call_tool', arguments: { name: 'word_count', arguments: { text: 'one two' } } });
      expect(counted.structuredContent).toEqual({ words: 2, characters: 7 });
    } finally {
      await modern.close();
    }
  });

  it('after an expired sign-in, returns the terminal command and the last link, and never starts another', async () => {
    const c = await bridge(path.join(configRoot, 'b'));
    const link = linkIn(await signIn(c))!;
    await new Promise((r) => setTimeout(r, SIGN_IN_TTL_MS + 2500));
    const ended = await signIn(c);
    expect(ended).toMatch(/expired/);
    expect(ended).toContain(`tollgate-mcp sign-in --gateway ${base} --url demo`);
    expect(ended).toContain(link);
    expect(ended).not.toMatch(/approve this device:\n/);
    expect((await approve(link, demo.ownerKey)).status).toBe(410);
    expect((await c.listTools()).tools.map((t) => t.name)).toEqual(['assay_sign_in']);
  });

  it('signs in from the terminal command the expired sign-in names', async () => {
    const dir = path.join(configRoot, 'terminal');
    const cli = startProcess('sign-in', process.execPath, [path.join(WORKSPACE_ROOT, 'apps/mcp-bridge/bin/tollgate-mcp.js'), 'sign-in', '--gateway', base, '--url', 'demo', '--config-dir', dir]);
    const link = linkIn(await cli.waitForOutput(/http:\/\/\S+\/signin\/approve\/[0-9a-f-]{36}/, 30_000))!;
    expect((await approve(link, demo.ownerKey)).status).toBe(200);
    await cli.waitForOutput(/Signed in/, 20_000);
    expect(await new Promise((r) => (cli.child.exitCode !== null ? r(cli.child.exitCode) : cli.child.once('exit', r)))).toBe(0);
    const c = await bridge(dir);
    expect(await signIn(c)).toBe(CONNECTED);
  });

  it('fails to start with a JSON-RPC error when the settings cannot be read or the lock cannot be taken', async () => {
    const unreadable = path.join(configRoot, 'c');
    mkdirSync(unreadable, { recursive: true });
    writeFileSync(path.join(unreadable, 'credentials.json'), '{ not json');
    const c = await bridge(unreadable);
    await expect(c.callTool({ name: 'assay_sign_in', arguments: {} })).rejects.toMatchObject({ code: -32603, message: expect.stringMatching(/settings/) });

    const locked = path.join(configRoot, 'd');
    mkdirSync(path.join(locked, 'signin.lock'), { recursive: true });
    const d = await bridge(locked);
    await expect(d.callTool({ name: 'assay_sign_in', arguments: {} })).rejects.toMatchObject({ code: -32603, message: expect.stringMatching(/lock/) });
  });

  describe('device sign-ins are hardened', () => {
    const start = () => fetch(`${base}/signin/device`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ deviceName: 'probe', slug: 'demo' }) });

    it('never stores the credential it hands over: the poll mints it, once', async () => {
      const started = (await (await start()).json()) as { requestId: string; pollToken: string; approvalUrl: string };
      expect((await approve(started.approvalUrl, demo.ownerKey)).status).toBe(200);
      const pg = new PgClient({ connectionString: `postgres://postgres:postgres@127.0.0.1:${pgPort}/tollgate` });
      await pg.connect();
      try {
        const row = async () => (await pg.query('SELECT row_to_json(d)::text AS json, agent_id FROM gateway.device_sign_in d WHERE request_id = $1', [started.requestId])).rows[0] as { json: string; agent_id: string };
        const credentialsOf = async (agentId: string) => Number((await pg.query('SELECT count(*) AS n FROM gateway.credential WHERE agent_id = $1', [agentId])).rows[0].n);
        const approved = await row();
        expect(approved.json).not.toMatch(/tg_/);
        expect(await credentialsOf(approved.agent_id)).toBe(0); // approved, not collected: no credential exists yet
        const poll = () => fetch(`${base}/signin/device/${started.requestId}/poll`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ pollToken: started.pollToken }) });
        const collected = (await (await poll()).json()) as { status: string; credential: string };
        expect(collected.status).toBe('approved');
        expect(collected.credential).toMatch(/^tg_/);
        expect((await row()).json).not.toContain(collected.credential);
        expect(await credentialsOf(approved.agent_id)).toBe(1);
        expect(((await (await poll()).json()) as { status: string }).status).toBe('collected'); // handed over once
        const dump = (await pg.query('SELECT string_agg(row_to_json(c)::text, \' \') AS all FROM gateway.credential c')).rows[0].all as string;
        expect(dump).not.toContain(collected.credential); // stored hashed only
      } finally {
        await pg.end();
      }
    });

    it('limits sign-ins per address, with the shared error shape and Retry-After', async () => {
      let limited: Response | undefined;
      // 21 starts span at most two UTC minutes, so one minute sees more than 10.
      for (let i = 0; i < 21 && !limited; i++) {
        const r = await start();
        if (r.status === 429) limited = r;
        else expect(r.status).toBe(201);
      }
      expect(limited).toBeDefined();
      expect(Number(limited!.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await limited!.json()).toMatchObject({ code: 'RATE_LIMITED', retryable: true, message: expect.any(String) });
    });
  });
});
