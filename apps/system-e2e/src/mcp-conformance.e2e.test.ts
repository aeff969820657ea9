/**
 * The official MCP conformance suite (@modelcontextprotocol/conformance 0.2.x, server scenarios) against `npm start`,
 * in both eras: the 2026-07-28 requirements and the 2025-11-25 ones, one run each against the same running gateway.
 *
 * The gateway is run the way it is used: the suite's fixture tools come from an upstream provider
 * ("conformance-fixtures", a sample provider in its own process) registered behind the gateway, so they are catalog
 * tools, and what the suite checks is what the gateway carries from that upstream to an agent — one of them is priced,
 * so its content crosses a paid call; its list change reaches the agent's `subscriptions/listen` stream through
 * discovery's watch of the provider. The suite sends no credential; a loopback proxy adds the agent's bearer header,
 * exactly what an agent's MCP client does.
 *
 * Failures must match the committed baseline of each era (apps/system-e2e/conformance-baseline.<era>.yml, every entry
 * with its reason): an unexpected failure, or a listed one that now passes, fails the run.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { freePort, type RunningProcess, startProcess, startTsProcess, waitFor, WORKSPACE_ROOT } from '@tollgate/testing';

jest.setTimeout(300_000);

const FIXTURES_TOKEN = 'conformance-fixtures-token-0123456789';
const PAID_TOOL = 'test_multiple_content_types';
/** Priced too, though it never runs through the gateway: it needs sampling, which the gateway never offers upstream. */
const NEEDS_SAMPLING = 'test_missing_capability';
/** Priced too: it answers input_required although the gateway declared nothing; never fulfilled, never charged (R4). */
const PUSHY = 'test_input_required_ignoring_capabilities';
const PRICE_MINOR = 250_000n; // 0.25 USDC
const DEPOSIT_MINOR = 100_000_000n; // the demo's 100 USDC

type Era = '2026-07-28' | '2025-11-25';
interface Demo { mcpUrl: string; credential: string; adminToken: string; ownerId: string; databaseUrl: string }

describe('MCP conformance suite against the gateway, both eras', () => {
  let providers: RunningProcess;
  let system: RunningProcess;
  /** One proxy per era, each adding its own agent's credential: refused calls are limited per agent (G9, 60 a minute). */
  const proxies: Partial<Record<Era, { server: http.Server; port: number }>> = {};
  let dataDir: string;
  let demo: Demo;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-conformance-'));
    chmodSync(dataDir, 0o755);
    const [port, pgPort, providersPort] = [await freePort(), await freePort(), await freePort()];
    providers = startTsProcess('sample-providers', 'apps/sample-providers/src/main.ts', [], { PORT: String(providersPort), SAMPLE_PROVIDERS_TOKEN: FIXTURES_TOKEN, LOG_LEVEL: 'info' });
    await providers.waitForOutput(/listening/, 120_000);
    const providersUrl = `http://127.0.0.1:${providersPort}`;
    system = startTsProcess('embedded', 'apps/embedded/src/main.ts', [], {
      PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), DATA_DIR: dataDir, LOG_LEVEL: 'warn', UPSTREAM_CREDENTIALS: `${providersUrl}=${FIXTURES_TOKEN}`,
    });
    await system.waitForOutput(/Tollgate is running/, 120_000);
    demo = JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as Demo;
    const gateway = new URL(demo.mcpUrl).origin;
    const admin = (method: string, route: string, body: unknown) =>
      fetch(`${gateway}${route}`, { method, headers: { 'content-type': 'application/json', authorization: `Bearer ${demo.adminToken}` }, body: JSON.stringify(body) });
    const registered = await admin('POST', '/admin/providers', { providerId: 'conformance-fixtures', endpoint: `${providersUrl}/providers/conformance-fixtures/mcp` });
    expect(registered.status).toBe(201);
    for (const tool of [PAID_TOOL, NEEDS_SAMPLING, PUSHY]) expect((await admin('PATCH', `/admin/tools/${tool}`, { priceMinor: String(PRICE_MINOR), asset: 'USDC' })).status).toBe(200);
    // The 2025 era runs as a second agent of the same owner (same wallet), so each era has its own refusal budget.
    const agent = (await (await admin('POST', `/admin/owners/${demo.ownerId}/agents`, { name: 'Conformance 2025' })).json()) as { agentId: string };
    const second = (await (await admin('POST', `/admin/agents/${agent.agentId}/credentials`, {})).json()) as { credential: string };
    for (const [era, credential] of [['2026-07-28', demo.credential], ['2025-11-25', second.credential]] as const) {
      const port = await freePort();
      const server = bearerProxy(new URL(demo.mcpUrl), credential);
      await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
      proxies[era] = { server, port };
    }
  });

  afterAll(async () => {
    for (const p of Object.values(proxies)) await new Promise((resolve) => p.server.close(resolve));
    await system?.stop();
    await providers?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** Runs one era's required scenarios against the proxy and returns the suite's output, its exit code checked. */
  async function conformance(requirements: Era): Promise<string> {
    const cli = path.join(WORKSPACE_ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
    const baseline = path.join(WORKSPACE_ROOT, `apps/system-e2e/conformance-baseline.${requirements}.yml`);
    const run = startProcess(`conformance ${requirements}`, process.execPath, [cli, 'server', '--url', `http://127.0.0.1:${proxies[requirements]!.port}/mcp`, '--requirements', requirements, '--expected-failures', baseline]);
    const code = await new Promise<number | null>((resolve) => run.child.once('exit', (c) => resolve(c)));
    const out = run.output();
    expect({ code, tail: code === 0 ? '' : out.slice(-6000) }).toEqual({ code: 0, tail: '' });
    expect(out).toMatch(/Baseline check passed/);
    return out;
  }

  /** Scenarios that must pass outright: what the gateway carries from its upstream, and its own HTTP surface. */
  const mustPass = (out: string, scenarios: string[]) => {
    for (const scenario of scenarios) expect(out).toMatch(new RegExp(`✓ ${scenario}: [1-9]\\d* passed, 0 failed`));
  };

  it('2026-07-28: every scenario that applies passes; content of every type crosses the gateway', async () => {
    const out = await conformance('2026-07-28');
    mustPass(out, ['server-stateless', 'tools-list', 'tools-call-simple-text', 'tools-call-image', 'tools-call-audio', 'tools-call-embedded-resource', 'tools-call-mixed-content',
      'tools-call-error', 'json-schema-2020-12', 'dns-rebinding-protection', 'http-header-validation', 'tools-call-with-progress',
      // The fixture's task tools become tasks at once through the gateway (a protocol error: a failed task).
      'tasks-lifecycle', 'tasks-capability-negotiation', 'tasks-wire-fields', 'tasks-request-headers', 'tasks-dispatch-and-envelope', 'tasks-required-task-error']);
  });

  it('2025-11-25: every scenario that applies passes, through the same gateway', async () => {
    const out = await conformance('2025-11-25');
    mustPass(out, ['server-initialize', 'ping', 'tools-list', 'tools-call-image', 'tools-call-audio', 'tools-call-embedded-resource', 'tools-call-mixed-content',
      'tools-call-error', 'json-schema-2020-12', 'dns-rebinding-protection', 'tools-call-with-progress']);
  });

  const callThroughProxy = (tool: string, version: string, meta: Record<string, unknown> | undefined) => fetch(`http://127.0.0.1:${proxies['2026-07-28']!.port}/mcp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': version, 'mcp-method': 'tools/call', 'mcp-name': tool },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: tool, arguments: {}, ...(meta ? { _meta: meta } : {}) } }),
  });
  const MODERN_META = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { elicitation: {}, sampling: {} }, 'io.modelcontextprotocol/clientInfo': { name: 'e2e', version: '1' } };

  it('a tool that needs a client capability: -32021 (HTTP 400) to a 2026-07-28 agent, a tool error naming it to a 2025 one', async () => {
    const call = (version: string, meta: Record<string, unknown> | undefined) => callThroughProxy(NEEDS_SAMPLING, version, meta);
    const modern = await call('2026-07-28', { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': { sampling: {} }, 'io.modelcontextprotocol/clientInfo': { name: 'e2e', version: '1' } });
    expect(modern.status).toBe(400);
    const error = ((await modern.json()) as { error: { code: number; data: Record<string, unknown> } }).error;
    expect(error).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
    expect(error.data['intentId']).toEqual(expect.any(String));
    const legacy = await call('2025-11-25', undefined);
    const result = ((await legacy.json()) as { result: { isError: boolean; _meta: Record<string, { code?: string; details?: unknown }> } }).result;
    expect(result.isError).toBe(true);
    expect(result._meta['assay/error']).toMatchObject({ code: 'PROVIDER_REQUEST_ERROR', details: { requiredCapabilities: { sampling: {} } } });
  });

  it('a provider that answers input_required anyway: never fulfilled or relayed (R4), -32021 naming what it asked for', async () => {
    const modern = await callThroughProxy(PUSHY, '2026-07-28', MODERN_META);
    expect(modern.status).toBe(400);
    expect(((await modern.json()) as { error: unknown }).error).toMatchObject({ code: -32021, data: { requiredCapabilities: { elicitation: {} } } });
    const legacy = (await (await callThroughProxy(PUSHY, '2025-11-25', undefined)).json()) as { result: { isError: boolean; _meta: Record<string, unknown> } };
    expect(legacy.result).toMatchObject({ isError: true, _meta: { 'assay/error': { code: 'PROVIDER_REQUEST_ERROR', details: { requiredCapabilities: { elicitation: {} } } } } });
    // The provider's own words (its question) never reach the agent: only the capability it needs.
    expect(JSON.stringify(legacy)).not.toMatch(/What is your name/);
  });

  it('charged the priced fixture tool once per call the suite made (its content crossed a paid call); the refused one never', async () => {
    const pg = new PgClient({ connectionString: demo.databaseUrl });
    await pg.connect();
    try {
      const calls = async (tool: string) => Number((await pg.query(`SELECT count(*)::int AS n FROM gateway.call WHERE tool_id = $1`, [tool])).rows[0].n);
      const available = async () => BigInt((await pg.query(`SELECT balance::text AS b FROM payment.balance WHERE account = $1`, [`owner:${demo.ownerId}:available`])).rows[0].b as string);
      const paid = await calls(PAID_TOOL);
      expect(paid).toBeGreaterThanOrEqual(2);
      expect(await calls(NEEDS_SAMPLING)).toBeGreaterThanOrEqual(3); // the suite's and the two above
      expect(await calls(PUSHY)).toBe(2);
      // A refused call's hold is released after its answer: wait until only the paid calls are held or charged.
      const expected = DEPOSIT_MINOR - PRICE_MINOR * BigInt(paid);
      await waitFor('refused holds released', async () => (await available()) === expected || undefined, 15_000, 200).catch(() => undefined);
      expect(await available()).toBe(expected);
    } finally {
      await pg.end();
    }
  });
});

/** Forwards every request to the gateway's MCP URL with the agent's bearer header added. */
function bearerProxy(target: URL, credential: string): http.Server {
  return http.createServer((req, res) => {
    const upstream = http.request(
      { host: target.hostname, port: target.port, path: target.pathname, method: req.method, headers: { ...req.headers, authorization: `Bearer ${credential}` } },
      (r) => {
        res.writeHead(r.statusCode ?? 502, r.headers);
        r.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
}
