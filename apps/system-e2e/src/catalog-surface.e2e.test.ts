/**
 * End to end: discovery, two gateway instances, execution, payment and
 * the sample providers, each its own process on the real Kafka broker and
 * PostgreSQL. Every assertion drives the gateway as an agent does — the
 * official MCP SDK Client over Streamable HTTP — or discovery's admin API as
 * an admin does. Requirement IDs: G1, G3.1–G3.10, G4, G6, G9, G10, R3, R6.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as PgClient } from 'pg';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { TopicSpecs } from '@tollgate/contracts';
import { createTestDatabase, ensureTopics, freePort, type RunningProcess, startTsProcess, waitFor } from '@tollgate/testing';
import { atStartOfMinuteWindow, connectAgent, errorOf, postJson, startEverythingServer } from './agent-client';

jest.setTimeout(300_000);

const SERVICES = ['discovery', 'gateway', 'gateway-b', 'execution', 'payment', 'sample-providers'] as const;
type Service = (typeof SERVICES)[number];

interface SearchOut {
  results: Record<string, unknown>[];
  categories: string[];
  total: number;
  nextCursor: string | null;
  limitApplied: number;
}


describe('catalog, MCP URLs, search_tools and get_tool', () => {
  const processes: RunningProcess[] = [];
  const ports = {} as Record<Service, number>;
  const adminToken = randomBytes(18).toString('base64url');
  const clients: Client[] = [];
  let db: { url: string; drop(): Promise<void> };
  let gw: string;
  let gwB: string;
  let disco: string;
  let providers: string;
  let everythingPort: number;
  const creds: Record<string, { agentId: string; credentialId: string; credential: string }> = {};
  let owner1: string;
  let owner2: string;
  let owner3: string;
  const policyRoot = mkdtempSync(path.join(os.tmpdir(), 'tollgate-policies-'));

  const admin = (path: string, body: unknown) => postJson(`${gw}${path}`, body, adminToken);
  const discoveryAdmin = (path: string, body: unknown) => postJson(`${disco}${path}`, body, adminToken);
  async function patch(url: string, body: unknown) {
    const res = await fetch(url, { method: 'PATCH', headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` }, body: JSON.stringify(body) });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  }
  /** Connects as `who`; by default as this test's own agent, so one test's rate-limit allowance never leaks into another. */
  async function agent(slug: string, who?: string, base = gw): Promise<Client> {
    const key = who ?? `t:${expect.getState().currentTestName}`;
    if (!creds[key]) await newAgent(key);
    const c = await connectAgent(`${base}/mcp/${slug}`, creds[key]!.credential);
    clients.push(c);
    return c;
  }
  const call = async (c: Client, name: string, args: Record<string, unknown>, _meta?: Record<string, unknown>) =>
    (await c.callTool({ name, arguments: args, ...(_meta ? { _meta } : {}) })) as CallToolResult;
  async function search(c: Client, args: Record<string, unknown>): Promise<SearchOut> {
    const r = await call(c, 'search_tools', args);
    expect(errorOf(r)).toBeUndefined();
    // G3.8: the same JSON as structuredContent and as text.
    expect(JSON.parse((r.content[0] as { text: string }).text)).toEqual(r.structuredContent);
    return r.structuredContent as unknown as SearchOut;
  }
  async function newAgent(key: string, ownerId = owner1) {
    const a = await admin(`/admin/owners/${ownerId}/agents`, { name: key.slice(0, 200) });
    expect(a.status).toBe(201);
    const c = await admin(`/admin/agents/${a.json['agentId']}/credentials`, {});
    creds[key] = { agentId: a.json['agentId'] as string, credentialId: c.json['credentialId'] as string, credential: c.json['credential'] as string };
  }

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_e2e_catalog');
    const prefix = `e2e-cat-${Date.now().toString(36)}-${randomBytes(2).toString('hex')}.`;
    await ensureTopics(TopicSpecs.map((t) => prefix + t.name));
    everythingPort = await freePort();
    processes.push(startEverythingServer(everythingPort));
    for (const s of SERVICES) ports[s] = await freePort();
    const env = (s: Service) => ({
      PORT: String(ports[s]), DATABASE_URL: db.url, KAFKA_TOPIC_PREFIX: prefix, OUTBOX_POLL_INTERVAL_MS: '1000',
      GATEWAY_ADMIN_TOKEN: adminToken, DISCOVERY_ADMIN_TOKEN: adminToken, DISCOVERY_SYNC_INTERVAL_MS: '0', GATEWAY_CALL_WAIT_MS: '20000',
      GATEWAY_POLICY_ROOT: policyRoot,
      // The tests stand behind a "proxy" on loopback, so each can speak from its own client address (X-Forwarded-For).
      GATEWAY_TRUSTED_PROXIES: 'loopback',
      SAMPLE_PROVIDERS_TOKEN: adminToken, UPSTREAM_CREDENTIALS: `http://127.0.0.1:${ports['sample-providers']}=${adminToken}`,
    });
    for (const s of SERVICES) processes.push(startTsProcess(s, `apps/${s === 'gateway-b' ? 'gateway' : s}/src/main.ts`, [], env(s)));
    await Promise.all(
      SERVICES.map((s) =>
        waitFor(`${s} ready`, async () => (await fetch(`http://127.0.0.1:${ports[s]}/health/${s === 'sample-providers' ? 'live' : 'ready'}`)).status < 500, 150_000, 250).catch((e) => {
          throw new Error(`${String(e)}\n${processes.find((x) => x.name === s)?.output().slice(-3000)}`);
        }),
      ),
    );
    gw = `http://127.0.0.1:${ports.gateway}`;
    gwB = `http://127.0.0.1:${ports['gateway-b']}`;
    disco = `http://127.0.0.1:${ports.discovery}`;
    providers = `http://127.0.0.1:${ports['sample-providers']}/providers`;

    owner1 = (await admin('/admin/owners', { name: 'Owner one' })).json['ownerId'] as string;
    owner2 = (await admin('/admin/owners', { name: 'Owner two' })).json['ownerId'] as string;
    for (const k of ['a1', 'a2', 'searcher', 'reader', 'lister', 'revoked']) await newAgent(k);
    await newAgent('o2', owner2);
    owner3 = (await admin('/admin/owners', { name: 'Owner with a policy' })).json['ownerId'] as string;
    for (const k of ['p1', 'p2']) await newAgent(k, owner3);
    const urls: Record<string, unknown>[] = [
      { slug: 'all-search', discoveryMode: 'search', pinnedTools: ['get_weather', 'no_such_tool'] },
      { slug: 'all-full', discoveryMode: 'full' },
      { slug: 'weather-only', discoveryMode: 'full', scopeCategories: ['weather'] },
      { slug: 'auto-small', discoveryMode: 'auto', autoThreshold: 5, scopeCategories: ['weather'] },
      { slug: 'auto-big', discoveryMode: 'auto', autoThreshold: 5 },
      { slug: 'no-catalog-demo', discoveryMode: 'search', providerRules: { deny: ['catalog-demo'] } },
      { slug: 'scoped-later', discoveryMode: 'search' },
      { slug: 'private-o2', discoveryMode: 'search', ownerId: owner2 },
      { slug: 'auth-probe', discoveryMode: 'search' },
      { slug: 'policy-full', discoveryMode: 'full', scopeCategories: ['messaging', 'network', 'weather'] },
    ];
    for (const u of urls) expect((await admin('/admin/mcp-urls', u)).status).toBe(201);

    const reg = async (body: Record<string, unknown>) => {
      const r = await discoveryAdmin('/admin/providers', body);
      expect(r.status).toBe(201);
      return r.json as { ok: boolean; error?: string; pages?: number; tools: { name: string }[]; refused: { name: string; reason: string }[] };
    };
    const demo = await reg({ providerId: 'catalog-demo', endpoint: `${providers}/catalog-demo/mcp` });
    expect(demo).toMatchObject({ ok: true, refused: [] });
    expect(demo.tools).toHaveLength(19);
    await reg({ providerId: 'everything', endpoint: `http://127.0.0.1:${everythingPort}/mcp`, defaults: { category: 'testing' } });
    await reg({ providerId: 'bulky-tools', endpoint: `${providers}/bulky-tools/mcp`, defaults: { category: 'bulky' } });
    await reg({ providerId: 'mutable-tools', endpoint: `${providers}/mutable-tools/mcp`, defaults: { category: 'orders' } });
    // The gateways see the catalog once the events have flowed through Kafka.
    const probe = await agent('all-search');
    await waitFor('catalog in the gateway', async () =>
      (await search(probe, { query: '', detail: 'names', limit: 50 })).total >= 19 + 30 + 1 && !errorOf(await call(probe, 'get_tool', { name: 'echo' })), 60_000, 500);
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await Promise.all(processes.map((p) => p.stop()));
    await db?.drop();
    rmSync(policyRoot, { recursive: true, force: true });
  });

  describe('discovery sync (R1, R3, R6)', () => {
    it('reads every cursor page of a paging provider', async () => {
      const r = await discoveryAdmin('/admin/providers', { providerId: 'paged-tools', endpoint: `${providers}/paged-tools/mcp`, defaults: { category: 'paged' } });
      expect(r.json).toMatchObject({ ok: true, pages: 3 });
      expect((r.json['tools'] as unknown[]).length).toBe(25);
    });

    it('is driven by the ops CLI too: sync and list', async () => {
      const cli = (...args: string[]) => {
        const p = startTsProcess('ops-cli', 'tools/ops/src/tollgate-ops.ts', ['providers', '--url', disco, '--token', adminToken, ...args]);
        return new Promise<{ code: number | null; out: string }>((resolve) => p.child.once('exit', (code) => resolve({ code, out: p.output() })));
      };
      const sync = await cli('sync', 'paged-tools');
      expect(sync.code).toBe(0);
      expect(JSON.parse(sync.out)).toMatchObject({ providerId: 'paged-tools', ok: true, pages: 3 });
      const list = await cli('list');
      expect(JSON.parse(list.out).providers.map((p: { providerId: string }) => p.providerId)).toEqual(expect.arrayContaining(['catalog-demo', 'paged-tools']));
      expect((await cli('approve', 'no_such_tool', '2')).code).toBe(1);
    });

    it('rejects a provider whose cursors cycle, and adds none of its tools', async () => {
      const r = await discoveryAdmin('/admin/providers', { providerId: 'cycle-tools', endpoint: `${providers}/cycle-tools/mcp` });
      expect(r.json).toMatchObject({ ok: false, tools: [] });
      expect(r.json['error']).toMatch(/cycle/);
      const list = await fetch(`${disco}/admin/providers`, { headers: { authorization: `Bearer ${adminToken}` } }).then((x) => x.json() as Promise<{ providers: { providerId: string; health: string; lastSyncError: string | null }[] }>);
      expect(list.providers.find((p) => p.providerId === 'cycle-tools')).toMatchObject({ health: 'unhealthy', lastSyncError: expect.stringMatching(/cycle/) });
      expect((await fetch(`${disco}/admin/tools/cycle_tool_1`, { headers: { authorization: `Bearer ${adminToken}` } })).status).toBe(404);
    });

    it('refuses and reports a tool whose metadata is over 64,000 bytes, keeping the others', async () => {
      const r = await discoveryAdmin('/admin/providers', { providerId: 'oversized-tools', endpoint: `${providers}/oversized-tools/mcp` });
      expect(r.json['ok']).toBe(true);
      expect((r.json['tools'] as { name: string }[]).map((t) => t.name).sort()).toEqual(['small_tool_a', 'small_tool_b']);
      expect(r.json['refused']).toEqual([{ name: 'huge_tool', reason: expect.stringMatching(/over the 64000-byte limit/) }]);
    });

    it('syncs server-everything over Streamable HTTP and over stdio: one catalog tool, two provider bindings (G10)', async () => {
      const r = await discoveryAdmin('/admin/providers', {
        providerId: 'everything-stdio', transport: 'stdio', command: process.execPath,
        args: [require.resolve('@modelcontextprotocol/server-everything/dist/index.js'), 'stdio'], defaults: { category: 'testing' },
      });
      expect(r.json['ok']).toBe(true);
      expect((r.json['tools'] as { name: string }[]).map((t) => t.name)).toContain('echo');
      const c = await agent('all-search');
      const echo = await waitFor('two echo bindings', async () => {
        const g = await call(c, 'get_tool', { name: 'echo' });
        const s = g.structuredContent as { providerTool: { providers: { providerId: string }[] } };
        return s.providerTool.providers.length === 2 ? s : undefined;
      }, 30_000, 300);
      expect(echo.providerTool.providers.map((p) => p.providerId).sort()).toEqual(['everything', 'everything-stdio']);
    });

    it('holds a changed contract back until an admin approves it, then retires the old version (R3)', async () => {
      const c = await agent('all-search');
      const v1 = (await call(c, 'get_tool', { name: 'lookup_order' })).structuredContent as { version: number; inputSchema: { properties: object } };
      expect(v1.version).toBe(1);
      // The provider deploys a new contract and says so with notifications/tools/list_changed; discovery re-syncs by itself.
      await postJson(`${providers}/mutable-tools/variant`, { variant: 2 }, adminToken);
      const pending = await waitFor('pending version 2', async () => {
        const t = await fetch(`${disco}/admin/tools/lookup_order`, { headers: { authorization: `Bearer ${adminToken}` } }).then((x) => x.json() as Promise<{ versions: { version: number; state: string; note: string }[] }>);
        return t.versions.find((v) => v.version === 2 && v.state === 'pending');
      }, 30_000, 300);
      expect(pending.note).toMatch(/inputSchema/);
      // Until approved, the gateway keeps serving version 1.
      const still = (await call(c, 'get_tool', { name: 'lookup_order' })).structuredContent as { version: number; inputSchema: { properties: object } };
      expect(still.version).toBe(1);
      expect(Object.keys(still.inputSchema.properties)).toEqual(['orderId']);

      const approved = await discoveryAdmin('/admin/tools/lookup_order/versions/2/approve', {});
      expect(approved.status).toBe(200);
      const v2 = await waitFor('version 2 in the gateway', async () => {
        const s = (await call(c, 'get_tool', { name: 'lookup_order' })).structuredContent as { version: number; inputSchema: { properties: object }; changelog?: { version: number; state: string }[] };
        return s.version === 2 ? s : undefined;
      }, 30_000, 300);
      expect(Object.keys(v2.inputSchema.properties).sort()).toEqual(['includeHistory', 'orderId']);
      expect(v2.changelog).toEqual([expect.objectContaining({ version: 1, state: 'retired' }), expect.objectContaining({ version: 2, state: 'approved' })]);
      // A call pinned to the retired version is told so, not silently upgraded.
      const pinned = await call(c, 'call_tool', { name: 'lookup_order', arguments: { orderId: 'o-1' } }, { 'assay/contractVersion': 1 });
      expect(errorOf(pinned)).toMatchObject({ code: 'CONTRACT_VERSION_RETIRED', details: { requestedVersion: 1, currentVersion: 2 } });
      // The provider rolls back to the old contract: the new optional input is supported by no provider now.
      await postJson(`${providers}/mutable-tools/variant`, { variant: 1 }, adminToken);
      const unsupported = await waitFor('UNSUPPORTED_INPUT_FIELD', async () => {
        const r = await call(c, 'call_tool', { name: 'lookup_order', arguments: { orderId: 'o-1', includeHistory: true } });
        return errorOf(r)?.code === 'UNSUPPORTED_INPUT_FIELD' ? r : undefined;
      }, 30_000, 300);
      expect(errorOf(unsupported)).toMatchObject({ retryable: false, details: { field: 'includeHistory', providers: ['mutable-tools'] } });
    });

    it('marks a tool removed when its only provider stops listing it: TOOL_REMOVED on call, TOOL_NOT_IN_TOOLSET on get_tool', async () => {
      // The provider's endpoint now lists other tools: small_tool_a and small_tool_b are gone.
      const r = await discoveryAdmin('/admin/providers', { providerId: 'oversized-tools', endpoint: `${providers}/text-tools/mcp` });
      expect((r.json['removed'] as string[]).sort()).toEqual(['small_tool_a', 'small_tool_b']);
      const c = await agent('all-search');
      const removed = await waitFor('removal in the gateway', async () => {
        const x = await call(c, 'call_tool', { name: 'small_tool_a', arguments: {} });
        return errorOf(x)?.code === 'TOOL_REMOVED' ? x : undefined;
      }, 30_000, 300);
      expect(removed.isError).toBe(true);
      // Every gateway instance reloads its in-memory catalog on the change (LISTEN/NOTIFY): get_tool follows within moments.
      await waitFor('get_tool to drop the removed tool', async () => errorOf(await call(c, 'get_tool', { name: 'small_tool_a' }))?.code === 'TOOL_NOT_IN_TOOLSET', 10_000, 100);
      expect(errorOf(await call(c, 'call_tool', { name: 'never_existed', arguments: {} }))?.code).toBe('TOOL_NOT_IN_TOOLSET');
    });

    it('serves its OpenAPI document and refuses admin calls without the token', async () => {
      const doc = (await fetch(`${disco}/docs-json`).then((x) => x.json())) as { paths: Record<string, unknown> };
      expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(['/admin/providers', '/admin/tools/{toolId}/versions/{version}/approve']));
      expect((await postJson(`${disco}/admin/providers`, { providerId: 'x1', endpoint: 'http://127.0.0.1:1/mcp' }, 'wrong-token')).status).toBe(401);
    });
  });

  describe('search_tools (G3)', () => {
    it('ranks what a user would type: weather forecast for a city, create a support ticket (G3.7)', async () => {
      const c = await agent('all-search');
      const weather = await search(c, { query: 'weather forecast for a city', detail: 'names' });
      expect(weather.results[0]!['name']).toBe('weather_forecast');
      expect(weather.results.slice(0, 3).map((r) => r['name'])).toContain('get_weather');
      const ticket = await search(c, { query: 'create a support ticket', detail: 'names' });
      expect(ticket.results[0]!['name']).toBe('create_support_ticket');
      for (const r of ticket.results) expect(typeof r['score']).toBe('number');
      const scores = ticket.results.map((r) => r['score'] as number);
      expect([...scores].sort((a, b) => b - a)).toEqual(scores);
    });

    it('turns control characters into spaces and enforces 500 characters / 1,500 UTF-8 bytes; accepts an empty query (G3.1)', async () => {
      const c = await agent('all-search');
      const ctl = await search(c, { query: 'weather\u0000forecast\u0007', detail: 'names' });
      expect(ctl.results[0]!['name']).toBe('weather_forecast');
      expect((await search(c, { query: 'a'.repeat(500), detail: 'names' })).limitApplied).toBe(10);
      expect(errorOf(await call(c, 'search_tools', { query: 'a'.repeat(501) }))).toMatchObject({ code: 'TOOL_ARGUMENTS_INVALID', retryable: false });
      expect((await search(c, { query: '€'.repeat(500), detail: 'names' })).total).toBe(0); // 1,500 bytes: allowed
      const bytes = await call(c, 'search_tools', { query: '𝄞'.repeat(400) }); // 400 characters, 1,600 bytes
      expect(errorOf(bytes)).toMatchObject({ code: 'TOOL_ARGUMENTS_INVALID', details: { problems: [expect.objectContaining({ field: 'query' })] } });
      const empty = await search(c, { query: '', detail: 'names', limit: 50 });
      expect(empty.total).toBeGreaterThanOrEqual(60);
    });

    it('lower-cases the category, caps it at 64 characters, and lists the scope\'s categories (G3.2, G3.7)', async () => {
      const c = await agent('all-search');
      const w = await search(c, { query: '', category: 'WEATHER', detail: 'names' });
      expect(w.results.map((r) => r['name']).sort()).toEqual(['air_quality', 'get_weather', 'weather_forecast']);
      expect(w.total).toBe(3);
      expect(w.categories).toEqual(expect.arrayContaining(['weather', 'support', 'finance', 'testing', 'bulky']));
      expect(errorOf(await call(c, 'search_tools', { query: 'x', category: 'c'.repeat(65) }))?.code).toBe('TOOL_ARGUMENTS_INVALID');
      const scoped = await agent('weather-only');
      expect((await search(scoped, { query: '' })).categories).toEqual(['weather']);
    });

    it('applies each detail level\'s default limit and clamps limit (G3.3, G3.4)', async () => {
      const c = await agent('all-search');
      expect((await search(c, { query: '' })).limitApplied).toBe(5);
      expect((await search(c, { query: '', detail: 'names' })).results).toHaveLength(10);
      expect((await search(c, { query: '', detail: 'full' })).limitApplied).toBe(3);
      expect((await search(c, { query: '', detail: 'names', limit: 100 })).limitApplied).toBe(50);
      expect((await search(c, { query: '', detail: 'names', limit: 0 })).limitApplied).toBe(10);
      expect((await search(c, { query: '', detail: 'summary', limit: -3 })).limitApplied).toBe(5);
      expect(errorOf(await call(c, 'search_tools', { query: '', limit: 2.5 }))?.code).toBe('TOOL_ARGUMENTS_INVALID');
      expect(errorOf(await call(c, 'search_tools', { query: '', detail: 'everything' }))?.code).toBe('TOOL_ARGUMENTS_INVALID');
    });

    it('rejects extra input properties, and a missing query without a cursor (G3.6, G3.10)', async () => {
      const c = await agent('all-search');
      const extra = errorOf(await call(c, 'search_tools', { query: 'x', sort: 'name' }));
      expect(extra).toMatchObject({ code: 'TOOL_ARGUMENTS_INVALID', details: { problems: [{ field: 'sort', problem: expect.any(String) }] } });
      expect(errorOf(await call(c, 'search_tools', {}))?.code).toBe('TOOL_ARGUMENTS_INVALID');
    });

    it('returns the fields of each detail level (G3.7)', async () => {
      const c = await agent('all-search');
      const names = await search(c, { query: 'get weather', detail: 'names', limit: 1 });
      expect(Object.keys(names.results[0]!).sort()).toEqual(['name', 'notReviewed', 'score']);
      const summary = await search(c, { query: 'current weather conditions', detail: 'summary', limit: 1 });
      expect(summary.results[0]).toEqual({
        name: 'get_weather', score: expect.any(Number), notReviewed: true, summary: expect.stringMatching(/weather/i), version: 1, kind: 'read',
        price: '0.001 USDC', assayPrice: { amountMinor: '1000', asset: 'USDC', decimals: 6, display: '0.001 USDC' }, freeCallsLeftToday: 3,
      });
      const full = await search(c, { query: 'get weather', detail: 'full', limit: 1 });
      expect(full.results[0]!['inputSchema']).toMatchObject({ type: 'object', properties: { city: expect.any(Object) } });
      const big = await search(c, { query: 'bulk import records', detail: 'full', limit: 1 });
      expect(big.results[0]).toMatchObject({ name: 'bulk_import_records', inputSchemaOmitted: true, note: expect.stringMatching(/get_tool/) });
      expect(big.results[0]!['inputSchema']).toBeUndefined();
    });

    it('keeps a response within 256 KiB, returning fewer results than the limit with a cursor to the rest (G3.8)', async () => {
      const c = await agent('all-search');
      const r = await call(c, 'search_tools', { query: '', category: 'bulky', detail: 'full', limit: 30 });
      const out = r.structuredContent as unknown as SearchOut;
      expect(Buffer.byteLength(JSON.stringify(r), 'utf8')).toBeLessThanOrEqual(256 * 1024);
      expect(out.limitApplied).toBe(30);
      expect(out.total).toBe(30);
      expect(out.results.length).toBeGreaterThan(0);
      expect(out.results.length).toBeLessThan(30);
      expect(out.nextCursor).toEqual(expect.any(String));
    });

    it('pages with the saved search: other fields given with the cursor change nothing, and the pages cover every match once (G3.5, G3.7)', async () => {
      const c = await agent('all-search');
      const first = await search(c, { query: 'weather ticket currency email', detail: 'names', limit: 2 });
      expect(first.total).toBeGreaterThan(4);
      const seen = first.results.map((r) => r['name']);
      let cursor = first.nextCursor;
      while (cursor) {
        const page = await search(c, { cursor, query: 'something else', detail: 'full', limit: 50, category: 'bulky' });
        expect(page.limitApplied).toBe(2);
        expect(page.total).toBe(first.total);
        for (const r of page.results) expect(Object.keys(r).sort()).toEqual(expect.arrayContaining(['name', 'score']));
        for (const r of page.results) expect(r['inputSchema']).toBeUndefined();
        seen.push(...page.results.map((r) => r['name']));
        cursor = page.nextCursor;
      }
      expect(new Set(seen).size).toBe(seen.length);
      expect(seen.length).toBe(first.total);
    });

    it('binds cursors to the credential and the URL, refuses altered ones, and stops after 10 pages (G3.9)', async () => {
      const c = await agent('all-search');
      const first = await search(c, { query: '', detail: 'names', limit: 1 });
      const cursor = first.nextCursor!;
      const expired = { code: 'INVALID_CURSOR', retryable: false, message: 'This search expired. Search again.' };
      const otherAgent = await agent('all-search', 'a2');
      expect(errorOf(await call(otherAgent, 'search_tools', { cursor }))).toMatchObject(expired);
      const otherUrl = await agent('all-full');
      expect(errorOf(await call(otherUrl, 'search_tools', { cursor }))).toMatchObject(expired);
      const [body, mac] = cursor.split('.');
      const altered = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(body!, 'base64url').toString()), offset: 0 })).toString('base64url');
      expect(errorOf(await call(c, 'search_tools', { cursor: `${altered}.${mac}` }))).toMatchObject(expired);
      // The same cursor on another gateway instance continues the search: cursors need no per-instance state.
      const viaB = await agent('all-search', undefined, gwB);
      expect((await search(viaB, { cursor })).results).toHaveLength(1);
      let next: string | null = cursor;
      let pages = 1;
      while (next) {
        pages += 1;
        next = (await search(c, { cursor: next })).nextCursor;
      }
      expect(pages).toBe(10);
      expect(first.total).toBeGreaterThan(10);
    });

    it('checks access again on every page (G3.9)', async () => {
      const c = await agent('scoped-later');
      const first = await search(c, { query: '', detail: 'names', limit: 3 });
      expect(first.results.some((r) => !['air_quality', 'get_weather', 'weather_forecast'].includes(r['name'] as string))).toBe(true);
      expect((await patch(`${gw}/admin/mcp-urls/scoped-later`, { scopeCategories: ['weather'] })).status).toBe(200);
      const page2 = await search(c, { cursor: first.nextCursor });
      for (const r of page2.results) expect(['air_quality', 'get_weather', 'weather_forecast']).toContain(r['name']);
      expect(page2.total).toBe(3);
    });

    it('never calls a provider: searches and reads record no call (G3, G4)', async () => {
      const c = await agent('all-search');
      const client = new PgClient({ connectionString: db.url });
      await client.connect();
      const count = async () => Number((await client.query('SELECT count(*) FROM gateway.call')).rows[0].count);
      const before = await count();
      await search(c, { query: 'send an email', detail: 'full' });
      await call(c, 'get_tool', { name: 'send_email' });
      expect(await count()).toBe(before);
      await client.end();
    });

    it('limits searches to 30 per agent per fixed UTC minute across two gateway instances, with retryAfterMs (G3.10)', async () => {
      await atStartOfMinuteWindow();
      const a = await agent('all-search', 'searcher');
      const b = await agent('all-full', 'searcher', gwB);
      for (let i = 0; i < 15; i++) {
        await search(a, { query: 'weather', detail: 'names' });
        await search(b, { query: 'weather', detail: 'names' });
      }
      for (const c of [a, b]) {
        const limited = errorOf(await call(c, 'search_tools', { query: 'weather' }));
        expect(limited).toMatchObject({ code: 'RATE_LIMITED', retryable: true });
        expect(limited!.retryAfterMs).toBeGreaterThan(0);
        expect(limited!.retryAfterMs).toBeLessThanOrEqual(60_000);
      }
      // get_tool has its own allowance.
      expect(errorOf(await call(a, 'get_tool', { name: 'get_weather' }))).toBeUndefined();
    });
  });

  describe('get_tool (G4)', () => {
    it('returns every field of the contract, the version in force, price, free calls and supply', async () => {
      const c = await agent('all-search');
      const r = await call(c, 'get_tool', { name: 'get_weather' });
      expect(JSON.parse((r.content[0] as { text: string }).text)).toEqual(r.structuredContent);
      expect(r.structuredContent).toEqual({
        name: 'get_weather', kind: 'read', category: 'weather', tags: ['weather', 'temperature', 'city'], summary: expect.any(String),
        description: 'Current weather conditions for a city: temperature, wind and sky.', notReviewed: true,
        inputSchema: expect.objectContaining({ type: 'object', required: ['city'] }), outputSchema: null,
        optionalInputFields: [], optionalOutputFields: [], examples: [], version: 1,
        providerTool: { providers: [{ providerId: 'catalog-demo', upstreamToolName: 'get_weather', health: 'healthy' }] },
        tier: 'standard', price: { amountMinor: '1000', asset: 'USDC', decimals: 6, display: '0.001 USDC' }, noProviderFits: false,
        freeCallsLeftToday: 3, annotations: { readOnlyHint: true, openWorldHint: true },
      });
      const forecast = (await call(c, 'get_tool', { name: 'weather_forecast' })).structuredContent as { optionalInputFields: string[] };
      expect(forecast.optionalInputFields).toEqual(['days']);
      const free = (await call(c, 'get_tool', { name: 'air_quality' })).structuredContent as { price: unknown };
      expect(free.price).toBeNull();
    });

    it('shows listing changes an admin makes: review, deprecation, examples', async () => {
      const upd = await patch(`${disco}/admin/tools/route_directions`, {
        reviewed: true, deprecation: { sunsetAt: '2027-06-30T00:00:00.000Z', replacement: 'geocode_address' }, examples: [{ title: 'Walk', arguments: { from: 'A', to: 'B' } }],
      });
      expect(upd.status).toBe(200);
      const c = await agent('all-search');
      const t = await waitFor('listing change in the gateway', async () => {
        const s = (await call(c, 'get_tool', { name: 'route_directions' })).structuredContent as Record<string, unknown>;
        return s['assay/deprecated'] ? s : undefined;
      }, 30_000, 300);
      expect(t['notReviewed']).toBeUndefined();
      expect(t['assay/deprecated']).toEqual({ sunsetAt: '2027-06-30T00:00:00.000Z', replacement: 'geocode_address' });
      expect(t['examples']).toEqual([{ title: 'Walk', arguments: { from: 'A', to: 'B' } }]);
    });

    it('says noProviderFits when the URL\'s provider rules exclude every binding, and call_tool refuses with NO_PROVIDER_MATCHES_RULES', async () => {
      const c = await agent('no-catalog-demo');
      expect(((await call(c, 'get_tool', { name: 'get_weather' })).structuredContent as { noProviderFits: boolean }).noProviderFits).toBe(true);
      expect(((await call(c, 'get_tool', { name: 'echo' })).structuredContent as { noProviderFits: boolean }).noProviderFits).toBe(false);
      expect(errorOf(await call(c, 'call_tool', { name: 'get_weather', arguments: { city: 'Oslo' } }))?.code).toBe('NO_PROVIDER_MATCHES_RULES');
    });

    it('counts freeCallsLeftToday down for this agent as it calls the tool', async () => {
      const c = await agent('all-search', 'a2');
      const before = ((await call(c, 'get_tool', { name: 'lookup_ip' })).structuredContent as { freeCallsLeftToday: number }).freeCallsLeftToday;
      expect(before).toBe(5);
      const r = await call(c, 'call_tool', { name: 'lookup_ip', arguments: { ip: '192.0.2.1' } });
      expect(r.isError).toBeFalsy();
      expect(((await call(c, 'get_tool', { name: 'lookup_ip' })).structuredContent as { freeCallsLeftToday: number }).freeCallsLeftToday).toBe(4);
      const other = await agent('all-search', 'a1');
      expect(((await call(other, 'get_tool', { name: 'lookup_ip' })).structuredContent as { freeCallsLeftToday: number }).freeCallsLeftToday).toBe(5);
    });

    it('answers TOOL_NOT_IN_TOOLSET outside the scope or for an unknown name, and TOOL_ARGUMENTS_INVALID for bad input', async () => {
      const scoped = await agent('weather-only');
      expect(errorOf(await call(scoped, 'get_tool', { name: 'send_email' }))).toMatchObject({ code: 'TOOL_NOT_IN_TOOLSET', retryable: false });
      expect(errorOf(await call(scoped, 'get_tool', { name: 'no_such_tool' }))?.code).toBe('TOOL_NOT_IN_TOOLSET');
      expect(errorOf(await call(scoped, 'get_tool', {}))?.code).toBe('TOOL_ARGUMENTS_INVALID');
      expect(errorOf(await call(scoped, 'get_tool', { name: 'get_weather', version: 1 }))?.code).toBe('TOOL_ARGUMENTS_INVALID');
      expect(errorOf(await call(scoped, 'get_tool', { name: 42 }))?.code).toBe('TOOL_ARGUMENTS_INVALID');
    });

    it('limits reads to 120 per agent per fixed UTC minute across two gateway instances', async () => {
      await atStartOfMinuteWindow();
      const a = await agent('all-search', 'reader');
      const b = await agent('all-search', 'reader', gwB);
      for (let i = 0; i < 60; i++) {
        expect(errorOf(await call(i % 2 ? a : b, 'get_tool', { name: 'get_weather' }))).toBeUndefined();
        expect(errorOf(await call(i % 2 ? b : a, 'get_tool', { name: 'get_weather' }))).toBeUndefined();
      }
      expect(errorOf(await call(b, 'get_tool', { name: 'get_weather' }))).toMatchObject({ code: 'RATE_LIMITED', retryAfterMs: expect.any(Number) });
    });
  });

  describe('listing modes and direct calls (G1, G6, G9)', () => {
    const names = async (c: Client) => (await c.listTools()).tools.map((t) => t.name);

    it('search mode lists the accessible pinned tools plus search_tools, get_tool, call_tool', async () => {
      // With a policy root configured, the self-verification tools follow the hosted ones.
      expect(await names(await agent('all-search'))).toEqual(['get_weather', 'search_tools', 'get_tool', 'call_tool', 'assay_check_args', 'assay_check_sequence', 'assay_policy_decide']);
    });

    it('full mode lists every accessible catalog tool with its schemas; the hosted tools stay callable but never widen the scope', async () => {
      const c = await agent('weather-only');
      const listed = (await c.listTools()).tools;
      expect(listed.map((t) => t.name)).toEqual(['air_quality', 'get_weather', 'weather_forecast']);
      expect(listed.find((t) => t.name === 'weather_forecast')).toMatchObject({ description: expect.stringMatching(/forecast/), inputSchema: { type: 'object', required: ['city'] } });
      const found = await search(c, { query: 'send an email', detail: 'names' });
      expect(found.results.every((r) => ['air_quality', 'get_weather', 'weather_forecast'].includes(r['name'] as string))).toBe(true);
      expect(errorOf(await call(c, 'call_tool', { name: 'send_email', arguments: {} }))?.code).toBe('TOOL_NOT_IN_TOOLSET');
      const all = await names(await agent('all-full'));
      expect(all).toEqual(expect.arrayContaining(['echo', 'get_weather', 'paged_tool_25', 'lookup_order']));
      expect(all).not.toContain('search_tools');
    });

    it('auto mode picks full under the threshold and search above it', async () => {
      expect(await names(await agent('auto-small'))).toEqual(['air_quality', 'get_weather', 'weather_forecast']);
      expect(await names(await agent('auto-big'))).toEqual(['search_tools', 'get_tool', 'call_tool', 'assay_check_args', 'assay_check_sequence', 'assay_policy_decide']);
    });

    it('runs a directly listed tool through the same call path as call_tool (G6)', async () => {
      const c = await agent('all-full');
      const direct = await call(c, 'echo', { message: 'direct' });
      expect(direct.content).toEqual([{ type: 'text', text: 'Echo: direct' }]);
      expect(direct._meta?.['assay/receipt']).toMatchObject({ toolId: 'echo', attempts: 1 });
      const wrapped = await call(c, 'call_tool', { name: 'echo', arguments: { message: 'wrapped' } });
      expect(wrapped.content).toEqual([{ type: 'text', text: 'Echo: wrapped' }]);
      expect(errorOf(await call(c, 'call_tool', { name: 'search_tools', arguments: { query: 'x' } }))?.code).toBe('TOOL_ARGUMENTS_INVALID');
      expect(errorOf(await call(c, 'call_tool', { name: 'echo', arguments: {}, extra: true }))?.code).toBe('TOOL_ARGUMENTS_INVALID');
    });

    it('limits tools/list to 60 per minute per credential and URL with JSON-RPC error -32029 (G9)', async () => {
      await atStartOfMinuteWindow();
      const c = await agent('all-search', 'lister');
      for (let i = 0; i < 60; i++) await c.listTools();
      await expect(c.listTools()).rejects.toMatchObject({ code: -32029 });
      // Another URL is another allowance.
      expect((await (await agent('auto-big', 'lister')).listTools()).tools).toHaveLength(6);
    });
  });

  describe('access policy and policy tools on the gateway', () => {
    const pg = () => new PgClient({ connectionString: db.url });
    async function counts(c: PgClient) {
      const one = async (sql: string) => Number((await c.query(sql)).rows[0].n);
      return {
        calls: await one('SELECT count(*) AS n FROM gateway.call'),
        requested: await one(`SELECT count(*) AS n FROM gateway.outbox_event WHERE envelope->>'type' = 'CallRequested'`),
        holds: await one('SELECT count(*) AS n FROM payment.hold'),
      };
    }
    const put = async (url: string, policy: string) => {
      const res = await fetch(url, { method: 'PUT', headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` }, body: JSON.stringify({ policy }) });
      return { status: res.status, json: (await res.json()) as Record<string, unknown> };
    };
    const ownerPolicy = (deny: string, ipPattern: string) => [
      'version: "2.0"', 'tools:', `  deny: ["${deny}"]`, 'schemas:', '  lookup_ip:', '    type: object', '    additionalProperties: false',
      `    properties: { ip: { type: string, pattern: "${ipPattern}" } }`, '    required: [ip]', 'enforcement:', '  unconstrained_tools: allow',
    ].join('\n');

    it('refuses a denied tool before any record, hold or dispatch, naming the rule (TOOL_NOT_ALLOWED)', async () => {
      expect((await put(`${gw}/admin/owners/${owner3}/access-policy`, ownerPolicy('send_*', '^192\\\\.'))).json).toMatchObject({ version: 1 });
      const c = await agent('policy-full', 'p1');
      const client = pg();
      await client.connect();
      const before = await counts(client);
      const r = await call(c, 'call_tool', { name: 'send_email', arguments: { to: 'a@b.c', subject: 's', body: 'b' } });
      expect(errorOf(r)).toMatchObject({ code: 'TOOL_NOT_ALLOWED', retryable: false, details: { rule: 'tools.deny: send_*', policy: 'owner', policyVersion: 1 } });
      const args = await call(c, 'lookup_ip', { ip: '10.0.0.1' });
      expect(errorOf(args)).toMatchObject({ code: 'TOOL_ARGUMENTS_INVALID', details: { policy: 'owner', violations: [expect.objectContaining({ constraint: 'schemas.lookup_ip: /ip pattern' })] } });
      await new Promise((res) => setTimeout(res, 500));
      expect(await counts(client)).toEqual(before);
      await client.end();
    });

    it('hides denied tools from tools/list and search, and never widens the URL', async () => {
      const c = await agent('policy-full', 'p1');
      const listed = (await c.listTools()).tools.map((t) => t.name);
      expect(listed).toEqual(expect.arrayContaining(['lookup_ip', 'get_weather']));
      expect(listed).not.toContain('send_email');
      expect(listed).not.toContain('send_sms');
      const found = await search(c, { query: 'send an email or sms', detail: 'names' });
      expect(found.results.map((r) => r['name'])).not.toContain('send_email');
    });

    it('records the policy versions in force on the call and on CallRequested (C2)', async () => {
      const c = await agent('policy-full', 'p2');
      const ok = await call(c, 'lookup_ip', { ip: '192.0.2.7' });
      expect(ok.isError).toBeFalsy();
      const intentId = (ok._meta?.['assay/receipt'] as { intentId: string }).intentId;
      expect((await put(`${gw}/admin/mcp-urls/policy-full/access-policy`, 'version: "2.0"\ntools:\n  deny: ["get_weather"]')).json).toMatchObject({ version: 1 });
      expect((await put(`${gw}/admin/owners/${owner3}/access-policy`, ownerPolicy('send_*', '^192\\\\.'))).json).toMatchObject({ version: 2 });
      const again = await call(c, 'lookup_ip', { ip: '192.0.2.8' });
      expect(again.isError).toBeFalsy();
      const second = (again._meta?.['assay/receipt'] as { intentId: string }).intentId;
      const client = pg();
      await client.connect();
      const pinned = async (id: string) => (await client.query(
        `SELECT c.access_policy AS row, o.envelope->'payload'->'accessPolicy' AS event FROM gateway.call c
           JOIN gateway.outbox_event o ON o.envelope->>'type' = 'CallRequested' AND o.envelope->'payload'->>'intentId' = c.intent_id::text WHERE c.intent_id = $1`, [id])).rows[0];
      expect(await pinned(intentId)).toEqual({ row: { ownerPolicyVersion: 1 }, event: { ownerPolicyVersion: 1 } });
      expect(await pinned(second)).toEqual({ row: { ownerPolicyVersion: 2, urlPolicyVersion: 1 }, event: { ownerPolicyVersion: 2, urlPolicyVersion: 1 } });
      await client.end();
      expect(errorOf(await call(c, 'call_tool', { name: 'get_weather', arguments: { city: 'Oslo' } }))).toMatchObject({ code: 'TOOL_NOT_ALLOWED', details: { policy: 'url', rule: 'tools.deny: get_weather' } });
    });

    it('refuses an invalid policy text at the admin API with E_POLICY_PARSE', async () => {
      const bad = await put(`${gw}/admin/owners/${owner3}/access-policy`, 'tools: [unclosed');
      expect(bad.status).toBe(400);
      expect(bad.json).toMatchObject({ code: 'E_POLICY_PARSE' });
    });

    it('serves the policy tools with the root fixed per owner', async () => {
      mkdirSync(path.join(policyRoot, owner3), { recursive: true });
      writeFileSync(path.join(policyRoot, owner3, 'self.yaml'), 'version: "2.0"\nschemas:\n  book_hotel:\n    type: object\n    properties: { nights: { type: integer, maximum: 7 } }\n');
      const c = await agent('all-search', 'p1');
      const r = await call(c, 'assay_check_args', { tool: 'book_hotel', arguments: { nights: 9 }, policy: 'self.yaml' });
      expect(r.structuredContent).toMatchObject({ allowed: false, suggested_fix: { nights: 7 } });
      const other = await agent('all-search', 'a1');
      const foreign = await call(other, 'assay_check_args', { tool: 'book_hotel', arguments: {}, policy: `../${owner3}/self.yaml` });
      expect(JSON.parse((foreign.content[0] as { text: string }).text)).toMatchObject({ allowed: false, error: { code: 'E_PERMISSION_DENIED' } });
      const none = await call(other, 'assay_check_args', { tool: 'book_hotel', arguments: {}, policy: 'self.yaml' });
      expect(JSON.parse((none.content[0] as { text: string }).text)).toMatchObject({ allowed: false, error: { code: 'E_POLICY_NOT_FOUND' } });
    });
  });

  describe('authentication (G8)', () => {
    const raw = (slug: string, authorization?: string, from?: string) =>
      fetch(`${gw}/mcp/${slug}`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json', accept: 'application/json, text/event-stream',
          ...(authorization ? { authorization } : {}), ...(from ? { 'x-forwarded-for': from } : {}),
        },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
      });
    const codeOf = async (res: Response) => ((await res.json()) as { error: { data: { code: string } } }).error.data.code;

    it('refuses a missing, a wrong and a revoked credential with MCP_CREDENTIAL_INVALID', async () => {
      const none = await raw('all-search');
      expect(none.status).toBe(401);
      expect(await codeOf(none)).toBe('MCP_CREDENTIAL_INVALID');
      expect(await codeOf(await raw('all-search', 'Bearer tg_not-a-real-one'))).toBe('MCP_CREDENTIAL_INVALID');
      const ok = await agent('all-search', 'revoked');
      expect((await ok.listTools()).tools.length).toBeGreaterThan(0);
      expect((await admin(`/admin/credentials/${creds['revoked']!.credentialId}/revoke`, {})).status).toBe(200);
      const after = await raw('all-search', `Bearer ${creds['revoked']!.credential}`);
      expect(after.status).toBe(401);
      expect(await codeOf(after)).toBe('MCP_CREDENTIAL_INVALID');
    });

    it('hides another owner\'s private URL, unknown and disabled URLs: MCP_URL_NOT_FOUND', async () => {
      const foreign = await raw('private-o2', `Bearer ${creds['a1']!.credential}`);
      expect(foreign.status).toBe(404);
      expect(((await foreign.json()) as { error: { message: string; data: { code: string } } }).error).toMatchObject({ message: 'No MCP server at this URL', data: { code: 'MCP_URL_NOT_FOUND' } });
      expect((await (await agent('private-o2', 'o2')).listTools()).tools.map((t) => t.name)).toContain('search_tools');
      expect(await codeOf(await raw('no-such-url', `Bearer ${creds['a1']!.credential}`))).toBe('MCP_URL_NOT_FOUND');
      // A disabled URL is unusable: it answers as if it were not there.
      expect((await admin('/admin/mcp-urls', { slug: 'soon-disabled' })).status).toBe(201);
      expect((await raw('soon-disabled', `Bearer ${creds['a1']!.credential}`)).status).toBe(200);
      expect((await admin('/admin/mcp-urls/soon-disabled/disable', {})).status).toBe(200);
      expect(await codeOf(await raw('soon-disabled', `Bearer ${creds['a1']!.credential}`))).toBe('MCP_URL_NOT_FOUND');
    });

    it('MCP_AUTH_RATE_LIMITED after 20 failures from one address — yet a valid credential behind it still works', async () => {
      await atStartOfMinuteWindow();
      const from = '203.0.113.7';
      for (let i = 0; i < 20; i++) expect((await raw('auth-probe', `Bearer tg_guess-${i}`, from)).status).toBe(401);
      const limited = await raw('auth-probe', 'Bearer tg_guess-next', from);
      expect(limited.status).toBe(429);
      expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await codeOf(limited)).toBe('MCP_AUTH_RATE_LIMITED');
      // The credential is checked first: a valid agent behind the same address is not locked out by someone else's guesses.
      expect((await raw('auth-probe', `Bearer ${creds['a1']!.credential}`, from)).status).toBe(200);
      // Another address is not limited by this one's failures.
      expect(await codeOf(await raw('auth-probe', 'Bearer tg_guess-next', '203.0.113.8'))).toBe('MCP_CREDENTIAL_INVALID');
    });

    it('one wrong secret presented from many addresses is limited per secret (10)', async () => {
      await atStartOfMinuteWindow();
      for (let i = 0; i < 10; i++) expect((await raw('auth-probe', 'Bearer tg_sprayed', `198.51.100.${i + 1}`)).status).toBe(401);
      expect(await codeOf(await raw('auth-probe', 'Bearer tg_sprayed', '198.51.100.200'))).toBe('MCP_AUTH_RATE_LIMITED');
      expect(await codeOf(await raw('auth-probe', 'Bearer tg_other-secret', '198.51.100.201'))).toBe('MCP_CREDENTIAL_INVALID');
    });
  });
});

