/**
 * The sample providers serve on their own loopback port behind a token, with a bound on open
 * sessions and an idle expiry — 1,000 `initialize` calls no longer leave 1,000 sessions, the fault knobs and the paid
 * demo tool are closed to anyone without the token.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { freePort, type RunningProcess, startTsProcess, waitFor } from '@tollgate/testing';

jest.setTimeout(120_000);

const TOKEN = 'sample-providers-test-token';
const INIT = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'probe', version: '1' } } };

describe('sample providers behind a token, bounded sessions', () => {
  let host: RunningProcess;
  let base: string;
  const opened: Client[] = [];

  const post = (path: string, body: unknown, authorization?: string) =>
    fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(authorization ? { authorization } : {}) }, body: JSON.stringify(body) });
  const sessions = async () => (await (await fetch(`${base}/providers/mutable-tools/sessions`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { open: number; max: number };
  const connect = async (path: string, token = TOKEN) => {
    const c = new Client({ name: 'probe', version: '1' });
    await c.connect(new StreamableHTTPClientTransport(new URL(`${base}${path}`), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    opened.push(c);
    return c;
  };

  beforeAll(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    host = startTsProcess('sample-providers', 'apps/sample-providers/src/main.ts', [], {
      PORT: String(port), SAMPLE_PROVIDERS_TOKEN: TOKEN, SAMPLE_PROVIDERS_MAX_SESSIONS: '3', SAMPLE_PROVIDERS_SESSION_IDLE_MS: '1500',
    });
    await waitFor('sample providers up', async () => (await fetch(`${base}/providers/text-tools/mcp`).catch(() => undefined)) !== undefined, 90_000, 250);
  });

  afterAll(async () => {
    await Promise.all(opened.map((c) => c.close().catch(() => undefined)));
    await host?.stop();
  });

  it('refuses the MCP routes and the fault knobs without the token, with a wrong one, or with a bare token', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-of-some-length', TOKEN, `Basic ${TOKEN}`]) {
      expect((await post('/providers/text-tools/mcp', INIT, authorization)).status).toBe(401);
      expect((await post('/providers/mutable-tools/mcp', INIT, authorization)).status).toBe(401);
      expect((await post('/providers/review-tickets/faults', { dropNextResponse: true }, authorization)).status).toBe(401);
      expect((await post('/providers/flaky/faults', { 'flaky-a': 100 }, authorization)).status).toBe(401);
    }
    // Nothing was changed by the refused knobs: the flaky provider still answers.
    const c = await connect('/providers/flaky-a/mcp');
    expect((await c.listTools()).tools.length).toBeGreaterThan(0);
  });

  it('serves a client that presents the token', async () => {
    const c = await connect('/providers/text-tools/mcp');
    const r = await c.callTool({ name: 'word_count', arguments: { text: 'one two three' } });
    expect(r.isError).toBeFalsy();
  });

  it('keeps at most the configured number of sessions, and closes idle ones', async () => {
    for (let i = 0; i < 3; i++) await connect('/providers/mutable-tools/mcp');
    expect(await sessions()).toEqual({ open: 3, max: 3 });
    const refused = await post('/providers/mutable-tools/mcp', INIT, `Bearer ${TOKEN}`);
    expect(refused.status).toBe(503);
    expect(await refused.json()).toMatchObject({ jsonrpc: '2.0', error: { code: -32000, message: 'Too many open sessions.' } });
    expect((await sessions()).open).toBe(3);
    // Idle for longer than the expiry: the sessions are closed and new ones can open.
    await waitFor('idle sessions closed', async () => (await sessions()).open === 0, 10_000, 200);
    const fresh = await connect('/providers/mutable-tools/mcp');
    expect((await fresh.listTools()).tools.length).toBeGreaterThan(0);
  });
});
