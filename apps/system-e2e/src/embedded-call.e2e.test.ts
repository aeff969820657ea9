/**
 * The embedded default (one process, the event log in PostgreSQL,
 * embedded PostgreSQL) serves the same call as the distributed system.
 */
import { readFileSync } from 'node:fs';
import { chmodSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as PgClient } from 'pg';
import { freePort, type RunningProcess, startTsProcess } from '@tollgate/testing';
import { callToolWhenListed, connectAgent, expectThreeSeparateFacts, postJson, startEverythingServer, timelineWhen } from './agent-client';

jest.setTimeout(180_000);

describe('embedded mode (npm start): one call end to end', () => {
  let system: RunningProcess;
  let everything: RunningProcess;
  let dataDir: string;
  let demo: { databaseUrl: string; mcpUrl: string; credential: string; ledgerUrl: string; adminToken: string; metricsToken: string };
  let agent: Client;
  let base: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-embedded-'));
    chmodSync(dataDir, 0o755); // the embedded engine runs PostgreSQL as its own user
    const [port, pgPort, everythingPort] = [await freePort(), await freePort(), await freePort()];
    everything = startEverythingServer(everythingPort);
    system = startTsProcess('embedded', 'apps/embedded/src/main.ts', [], { DEMO_MONEY: 'false', PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), DATA_DIR: dataDir, SETTLEMENT_VERIFICATION_WINDOW_MS: '200', HTTP_REQUEST_HEAD_TIMEOUT_MS: '1500' });
    await system.waitForOutput(/Tollgate is running/, 120_000);
    await everything.waitForOutput(/listening on port/i, 30_000);
    demo = JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8'));
    base = `http://127.0.0.1:${port}`;
    const reg = await postJson(`${base}/admin/providers`, { providerId: 'everything', endpoint: `http://127.0.0.1:${everythingPort}/mcp` }, demo.adminToken);
    expect(reg.status).toBe(201);
    agent = await connectAgent(demo.mcpUrl, demo.credential);
  });

  afterAll(async () => {
    await agent?.close();
    await system?.stop();
    await everything?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('writes the MCP URL, credential and ledger URL to data/demo.json', () => {
    expect(demo.mcpUrl).toBe(`${base}/mcp/demo`);
    expect(demo.credential).toMatch(/^tg_/);
    expect(demo.ledgerUrl).toBe(`${base}/calls`);
  });

  it('calls server-everything echo through call_tool and returns its content unchanged, with three separate facts in the ledger', async () => {
    const result = await callToolWhenListed(agent, 'echo', { message: 'hello from embedded' });
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: 'Echo: hello from embedded' }]);
    const receipt = result._meta?.['assay/receipt'] as { intentId: string; providerId: string; attempts: number; toolId: string };
    expect(receipt).toMatchObject({ providerId: 'everything', attempts: 1, toolId: 'echo' });
    const t = await timelineWhen(demo.ledgerUrl, receipt.intentId, (x) => x.status === 'settled', demo.adminToken);
    expectThreeSeparateFacts(t);
  });

  it('keeps serving calls, and settling them, while another session holds a transaction open in the same database', async () => {
    // An idle session inside a transaction that has an id (a migration, an index build, a forgotten psql): the old
    // log delivered nothing newer than it, so every call waited for it.
    const idle = new PgClient({ connectionString: demo.databaseUrl });
    await idle.connect();
    try {
      await idle.query('BEGIN');
      const [{ txid }] = (await idle.query('SELECT pg_current_xact_id()::text AS txid')).rows;
      await callToolWhenListed(agent, 'word_count', { text: 'warm' });
      let last = '';
      for (let i = 0; i < 10; i++) {
        const t0 = Date.now();
        const r = await agent.callTool({ name: 'call_tool', arguments: { name: 'word_count', arguments: { text: `call ${i}` } } });
        expect(r.structuredContent).toEqual({ words: 2, characters: `call ${i}`.length });
        expect(Date.now() - t0).toBeLessThan(5_000);
        last = (r._meta?.['assay/receipt'] as { intentId: string }).intentId;
      }
      const t = await timelineWhen(demo.ledgerUrl, last, (x) => x.status === 'settled', demo.adminToken);
      expect(t.status).toBe('settled');
      // Still the same open transaction, older than every call above.
      expect((await idle.query('SELECT pg_current_xact_id()::text AS txid')).rows[0].txid).toBe(txid);
    } finally {
      await idle.query('ROLLBACK').catch(() => undefined);
      await idle.end();
    }
  });

  it('serves the demo provider tool with its structured content', async () => {
    const result = await callToolWhenListed(agent, 'word_count', { text: 'one two three' });
    expect(result.structuredContent).toEqual({ words: 3, characters: 13 });
  });

  it('does not serve the sample providers on the public port: the paid demo tool is reachable only through the gateway', async () => {
    for (const p of ['/providers/text-tools/mcp', '/providers/review-tickets/faults', '/providers/mutable-tools/mcp']) {
      const r = await fetch(`${base}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } }) });
      expect(r.status).toBe(404);
    }
  });

  describe('slow and idle connections, unreadable paths', () => {
    /** Opens a raw TCP connection, runs `talk` on it, and resolves with how long it stayed open. */
    const openFor = (talk: (s: net.Socket) => void) => new Promise<number>((resolve) => {
      const t0 = Date.now();
      const s = net.connect(Number(new URL(base).port), '127.0.0.1', () => talk(s));
      s.on('error', () => undefined);
      s.on('close', () => resolve(Date.now() - t0));
    });

    it('closes a connection that never sends a byte', async () => {
      const ms = await openFor(() => undefined);
      expect(ms).toBeGreaterThanOrEqual(1400);
      expect(ms).toBeLessThan(8000);
    });

    it('closes a connection that trickles its request head', async () => {
      let timer: NodeJS.Timeout | undefined;
      const ms = await openFor((s) => {
        s.write('GET /health/live HTTP/1.1\r\nHost: x\r\n');
        timer = setInterval(() => s.writable && s.write('X-Slow: 1\r\n'), 200); // never the blank line
      });
      clearInterval(timer);
      expect(ms).toBeLessThan(8000);
    });

    it('keeps serving a client that sends its request in time', async () => {
      expect((await fetch(`${base}/health/live`)).status).toBe(200);
    });

    it('answers NUL, control characters and malformed escapes in a path or query with a 400 problem document', async () => {
      for (const p of ['/balances/owners/%00', '/calls/abc%00def', '/mcp/de%00mo', '/balances/owners/%ZZ', '/calls/%ED%A0%80', '/balances?asOf=%01']) {
        const r = await fetch(`${base}${p}`, { headers: { authorization: `Bearer ${demo.adminToken}` } });
        expect({ p, status: r.status, type: r.headers.get('content-type') }).toEqual({ p, status: 400, type: expect.stringMatching(/^application\/problem\+json/) });
        expect(await r.json()).toEqual({ type: 'about:blank', title: 'Bad Request', status: 400, detail: expect.any(String) });
      }
    });
  });

  it('serves Prometheus metrics to a scrape with the metrics token: calls by outcome, HTTP latency, readiness figures', async () => {
    await callToolWhenListed(agent, 'word_count', { text: 'metrics please' });
    // A local caller without the token is refused; the token is in demo.json (0600, like the folder).
    const refused = await fetch(`${base}/metrics`);
    expect(refused.status).toBe(401);
    expect(await refused.json()).toMatchObject({ code: 'METRICS_TOKEN_INVALID' });
    expect(statSync(path.join(dataDir, 'demo.json')).mode & 0o777).toBe(0o600);
    expect(statSync(dataDir).mode & 0o077).toBe(process.getuid?.() === 0 ? 0o011 : 0);
    const res = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${demo.metricsToken}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    const text = await res.text();
    expect(text).toMatch(/^tollgate_calls_total\{outcome="ok",code=""\} [1-9]/m);
    expect(text).toMatch(/^tollgate_call_duration_seconds_count\{outcome="ok"\} [1-9]/m);
    expect(text).toMatch(/^tollgate_http_request_duration_seconds_count\{method="POST",route="\/mcp\/:slug",status="2xx"\} [1-9]/m);
    expect(text).toMatch(/^tollgate_figure\{name="gateway\.search\.toolsEmbedded"\} \d+/m);
    expect(text).toMatch(/^tollgate_process_cpu_seconds_total /m);
  });

  it('refuses a bad credential and an unknown URL with the spec codes', async () => {
    const bad = await fetch(demo.mcpUrl, { method: 'POST', headers: { authorization: 'Bearer tg_wrong', 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(bad.status).toBe(401);
    expect(((await bad.json()) as { error: { data: { code: string } } }).error.data.code).toBe('MCP_CREDENTIAL_INVALID');
    const none = await fetch(`${base}/mcp/no-such-url`, { method: 'POST', headers: { authorization: `Bearer ${demo.credential}`, 'content-type': 'application/json' }, body: '{}' });
    expect(none.status).toBe(404);
    expect(((await none.json()) as { error: { message: string; data: { code: string } } }).error).toMatchObject({ message: 'No MCP server at this URL', data: { code: 'MCP_URL_NOT_FOUND' } });
  });

  it('answers an unknown catalog tool with TOOL_NOT_IN_TOOLSET in the shared error shape', async () => {
    const r = await agent.callTool({ name: 'call_tool', arguments: { name: 'no_such_tool', arguments: {} } });
    expect(r.isError).toBe(true);
    expect(r._meta?.['assay/error']).toMatchObject({ code: 'TOOL_NOT_IN_TOOLSET', retryable: false });
  });

  describe('hostile input is refused at the edge', () => {
    const rpc = async (body: string) => {
      const r = await fetch(demo.mcpUrl, { method: 'POST', headers: { authorization: `Bearer ${demo.credential}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body });
      return { status: r.status, text: await r.text() };
    };
    const callWith = (args: string) => rpc(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"word_count","arguments":${args}}}}`);
    const refusalOf = (text: string) => (JSON.parse(text) as { result: { isError: boolean; _meta: Record<string, { code: string; retryable: boolean; message: string }> } }).result;

    it('malformed JSON: JSON-RPC -32700 on the MCP route, a problem document on an admin route, never the request echoed', async () => {
      const mcp = await rpc('{"jsonrpc":"2.0","id":1,"method":"tools/list" SECRET-BYTES');
      expect(mcp.status).toBe(400);
      expect(JSON.parse(mcp.text)).toEqual({ jsonrpc: '2.0', id: null, error: { code: -32700, message: 'Parse error' } });
      const admin = await fetch(`${base}/admin/owners`, { method: 'POST', headers: { authorization: `Bearer ${demo.adminToken}`, 'content-type': 'application/json' }, body: '{"name": SECRET-BYTES' });
      expect(admin.status).toBe(400);
      expect(admin.headers.get('content-type')).toMatch(/application\/problem\+json/);
      const text = await admin.text();
      expect(JSON.parse(text)).toMatchObject({ status: 400, title: 'Bad Request' });
      expect(mcp.text + text).not.toContain('SECRET-BYTES');
    });

    it('params that do not fit the protocol: JSON-RPC -32602 naming the field, not the validator\'s text', async () => {
      const { status, text } = await rpc('{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":5}}');
      expect(status).toBe(200);
      const body = JSON.parse(text) as { id: number; error: { code: number; message: string; data: { problems: { field: string }[] } } };
      expect(body).toMatchObject({ id: 9, error: { code: -32602, message: 'Invalid params' } });
      expect(body.error.data.problems[0]!.field).toBe('params.name');
      expect(text).not.toMatch(/invalid_type|ZodError|"expected"/);
    });

    it('found by the fuzz suite: a method named __proto__, initialize with bad params, a deeply nested admin body — clean refusals', async () => {
      const proto = await rpc('{"jsonrpc":"2.0","id":3,"method":"__proto__"}');
      expect(proto.status).toBe(200);
      expect(JSON.parse(proto.text)).toMatchObject({ id: 3, error: { code: -32601 } });
      const init = await rpc('{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"x":1}}');
      expect(JSON.parse(init.text)).toMatchObject({ id: 4, error: { code: -32602, message: 'Invalid params' } });
      expect(init.text).not.toMatch(/invalid_type|"expected"/);
      // Found after the fuzz run, by hand: a NUL in an admin or sign-in body reached PostgreSQL (500).
      for (const [p, body] of [['/admin/owners', '{"name":"a\\u0000b"}'], ['/signin/device', '{"deviceName":"a\\u0000b","slug":"demo"}'], ['/admin/owners', '{"name":"\\ud800"}']]) {
        const r = await fetch(`${base}${p}`, { method: 'POST', headers: { authorization: `Bearer ${demo.adminToken}`, 'content-type': 'application/json' }, body });
        expect({ p, status: r.status }).toEqual({ p, status: 400 });
        expect(await r.json()).toMatchObject({ title: 'Bad Request', detail: expect.stringMatching(/NUL character or a lone surrogate/) });
      }
      const deep = await fetch(`${base}/admin/owners`, { method: 'POST', headers: { authorization: `Bearer ${demo.adminToken}`, 'content-type': 'application/json' }, body: `${'{"a":'.repeat(3000)}1${'}'.repeat(3000)}` });
      expect(deep.status).toBe(400);
      expect(await deep.json()).toMatchObject({ title: 'Bad Request', status: 400, detail: expect.stringMatching(/nests deeper/) });
    });

    it.each([
      ['a NUL character', '{"text":"a\\u0000b"}', 'arguments.arguments.text'],
      ['a lone surrogate', '{"text":"\\ud800"}', 'arguments.arguments.text'],
      ['a constructor key', '{"text":"x","constructor":{"prototype":{"polluted":true}}}', 'arguments.arguments.constructor'],
      ['a __proto__ key', '{"__proto__":{"polluted":true}}', 'arguments.arguments.__proto__'],
      ['5,000 levels of nesting', `{"text":${'['.repeat(5000)}${']'.repeat(5000)}}`, 'arguments.arguments.text'],
    ])('%s: TOOL_ARGUMENTS_INVALID, not retryable, no internal text', async (_what, args, field) => {
      const { status, text } = await callWith(args);
      expect(status).toBe(200);
      const result = refusalOf(text);
      expect(result.isError).toBe(true);
      expect(result._meta['assay/error']).toMatchObject({ code: 'TOOL_ARGUMENTS_INVALID', retryable: false });
      expect(JSON.stringify(result)).toContain(field);
      expect(text).not.toMatch(/PostgreSQL|QueryFailedError|RangeError|stack|at [A-Za-z]+ \(/);
    });
  });
});
