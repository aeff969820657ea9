/**
 * G1, G2 — the sign-in attacked as an attacker would, against the real embedded host (`npm start`'s process): a
 * client ID naming a compressed bomb or a long stream, client IDs naming loopback in other spellings and the cloud
 * metadata address, framing of the owner pages, a second owner and a second client reaching for the first's grant,
 * oversized and malformed parameters, an open-redirect attempt, a foreign resource on refresh, a flood of token
 * requests. Each is refused with a clear OAuth error and changes nothing else; the official conformance suite's
 * authorization-server scenarios pass. The operator here allows one loopback address and port (the document server's),
 * nothing more: every other destination is the default policy's.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { type Browser, chromium } from 'playwright-core';
import { freePort, type RunningProcess, startProcess, startTsProcess, WORKSPACE_ROOT } from '@tollgate/testing';

jest.setTimeout(240_000);

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
const rssMb = (pid: number) => Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

describe('the sign-in under attack (G1, G2)', () => {
  let system: RunningProcess;
  let dataDir: string;
  let base: string;
  let demo: { ownerKey: string; adminToken: string; ownerId: string };
  let browser: Browser;
  let app: http.Server;
  let appUrl: string;
  /** The one destination the operator allows: loopback on this port (what a hostile public site would be). */
  let docs: http.Server;
  let docsPort: number;
  /** Listeners the gateway must never dial: another port on 127.0.0.1, and 127.0.0.2 on the allowed port. */
  const forbidden: http.Server[] = [];
  let forbiddenPort: number;
  let dialled = 0;

  const post = (p: string, body: Record<string, string>, type: 'form' | 'json' = 'form') => fetch(`${base}${p}`, {
    method: 'POST', redirect: 'manual', headers: { 'content-type': type === 'form' ? 'application/x-www-form-urlencoded' : 'application/json' },
    body: type === 'form' ? new URLSearchParams(body).toString() : JSON.stringify(body),
  });
  const mcpStatus = async (token: string, slug = 'demo') => (await fetch(`${base}/mcp/${slug}`, {
    method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${token}`, 'mcp-protocol-version': '2025-11-25' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} }),
  })).status;
  const authorize = (params: Record<string, string>) => fetch(`${base}/authorize?${new URLSearchParams(params)}`, { redirect: 'manual' });

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-oauth-attacks-'));
    chmodSync(dataDir, 0o755);
    const bomb = gzipSync(Buffer.alloc(128 * 1024 * 1024, ' '));
    docs = http.createServer((req, res) => {
      if (req.url === '/bomb.json') return void res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' }).end(bomb);
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < 4096; i++) res.write('{"client_id":"x","padding":"' + 'a'.repeat(1024) + '"},');
      res.end();
    });
    await new Promise<void>((r) => docs.listen(0, '127.0.0.1', r));
    docsPort = (docs.address() as AddressInfo).port;
    forbiddenPort = await freePort();
    for (const [host, port] of [['127.0.0.1', forbiddenPort], ['127.0.0.2', docsPort]] as const) {
      const s = http.createServer((_q, res) => res.end('{}'));
      s.on('connection', () => dialled++);
      await new Promise<void>((r) => s.listen(port, host, r));
      forbidden.push(s);
    }
    app = http.createServer((_q, res) => res.end('<p>back in the app</p>'));
    await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
    appUrl = `http://127.0.0.1:${(app.address() as AddressInfo).port}/callback`;
    const [port, pgPort] = [await freePort(), await freePort()];
    system = startTsProcess('embedded', 'apps/embedded/src/main.ts', [], {
      PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), DATA_DIR: path.join(dataDir, 'data'), LOG_LEVEL: 'warn',
      GATEWAY_OUTBOUND_ALLOWED_NETWORKS: '127.0.0.1/32', GATEWAY_OUTBOUND_ALLOWED_PORTS: String(docsPort),
    });
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
    await system.waitForOutput(/Tollgate is running/, 150_000);
    demo = JSON.parse(readFileSync(path.join(dataDir, 'data', 'demo.json'), 'utf8'));
    base = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    await browser?.close();
    for (const s of [docs, app, ...forbidden]) s?.closeAllConnections();
    for (const s of [docs, app, ...forbidden]) s?.close();
    await system?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  /** A dynamically registered client, its consent by `ownerKey` in the browser, and its first tokens. */
  async function signIn(ownerKey = demo.ownerKey) {
    const reg = await (await post('/register', { client_name: 'Attack test app', redirect_uris: [appUrl], token_endpoint_auth_method: 'none' } as never, 'json')).json();
    const clientId = reg.client_id as string;
    const verifier = randomBytes(32).toString('base64url');
    const page = await browser.newPage();
    try {
      await page.goto(`${base}/authorize?${new URLSearchParams({ response_type: 'code', client_id: clientId, redirect_uri: appUrl, state: 's',
        code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256', resource: `${base}/mcp/demo` })}`);
      await page.fill('#ownerKey', ownerKey);
      await page.click('button[value="approve"]');
      await page.waitForURL(/\/callback\?/);
      const code = new URL(page.url()).searchParams.get('code')!;
      const tokens = await (await post('/token', { grant_type: 'authorization_code', code, code_verifier: verifier, client_id: clientId, redirect_uri: appUrl })).json();
      return { clientId, ...tokens } as { clientId: string; access_token: string; refresh_token: string };
    } finally {
      await page.close();
    }
  }

  it('a client ID naming a compressed bomb or an endless body is refused without growing the process', async () => {
    const pid = system.child.pid!;
    const before = rssMb(pid);
    for (const doc of ['bomb.json', 'stream.json']) {
      const res = await authorize({ client_id: `http://127.0.0.1:${docsPort}/${doc}`, response_type: 'code' });
      expect(res.status).toBe(400);
      expect(await res.json()).toEqual({ error: 'invalid_client', error_description: 'Unknown client_id, or its client metadata document could not be used.' });
    }
    expect(rssMb(pid) - before).toBeLessThan(64);
  });

  it('never dials loopback however it is spelled, another port, or the cloud metadata address', async () => {
    const ids = [`https://2130706433:${forbiddenPort}/c.json`, `https://0x7f.1:${forbiddenPort}/c.json`, `http://127.0.0.1:${forbiddenPort}/c.json`,
      `http://2130706434:${docsPort}/c.json`, `http://[::ffff:127.0.0.2]:${docsPort}/c.json`, 'https://169.254.169.254/latest/meta-data.json', `http://localhost:${forbiddenPort}/c.json`];
    for (const clientId of ids) {
      const res = await authorize({ client_id: clientId, response_type: 'code' });
      expect({ clientId, status: res.status, error: (await res.json()).error }).toEqual({ clientId, status: 400, error: 'invalid_client' });
    }
    expect(dialled).toBe(0);
  });

  it('no page that acts with an owner key can be framed', async () => {
    const started = await (await post('/signin/device', { deviceName: 'Laptop', slug: 'demo' }, 'json')).json();
    for (const res of [await fetch(started.approvalUrl), await post(`/signin/approve/${started.requestId}`, { ownerKey: 'wrong' })]) {
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('content-security-policy')).toMatch(/frame-ancestors 'none'/);
      expect(res.headers.get('content-security-policy')).toMatch(/form-action 'self'/);
    }
    // And a browser refuses to render it inside another site's frame.
    const page = await browser.newPage();
    try {
      await page.setContent(`<iframe id="f" src="${started.approvalUrl}"></iframe>`);
      await page.waitForTimeout(500);
      const frame = page.frames().find((f) => f.url().includes('/signin/approve/'));
      expect(await frame?.$('#ownerKey').catch(() => null) ?? null).toBeNull();
    } finally {
      await page.close();
    }
  });

  it('a device sign-in\'s credential reaches the one URL the owner approved, no other URL of the owner', async () => {
    const started = await (await post('/signin/device', { deviceName: 'Laptop', slug: 'demo' }, 'json')).json();
    expect((await post(`/signin/approve/${started.requestId}`, { ownerKey: demo.ownerKey })).status).toBe(200);
    const polled = await (await post(`/signin/device/${started.requestId}/poll`, { pollToken: started.pollToken }, 'json')).json();
    expect(polled).toMatchObject({ status: 'approved', mcpPath: '/mcp/demo' });
    const other = await fetch(`${base}/admin/mcp-urls`, { method: 'POST', headers: { authorization: `Bearer ${demo.adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify({ slug: 'device-elsewhere' }) });
    expect(other.status).toBe(201);
    expect(await mcpStatus(polled.credential)).toBe(200);
    expect(await mcpStatus(polled.credential, 'device-elsewhere')).toBe(401);
  });

  it('a second owner and a second client reach nothing of the first\'s grant', async () => {
    const victim = await signIn();
    const admin = (p: string, body: unknown = {}) => fetch(`${base}${p}`, { method: 'POST', headers: { authorization: `Bearer ${demo.adminToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const mallory = await (await admin('/admin/owners', { name: 'Mallory' })).json();
    const malloryKey = (await (await admin(`/admin/owners/${mallory.ownerId}/owner-keys`)).json()).ownerKey;
    const victimGrants = await (await post('/oauth/grants', { ownerKey: demo.ownerKey }, 'json')).json();
    const grantId = victimGrants.grants.find((g: { clientId: string }) => g.clientId === victim.clientId).grantId;
    const refused = await post(`/oauth/grants/${grantId}/revoke`, { ownerKey: malloryKey }, 'json');
    expect([refused.status, (await refused.json()).code]).toEqual([404, 'GRANT_NOT_FOUND']);
    expect((await (await post('/oauth/grants', { ownerKey: malloryKey }, 'json')).json()).grants).toEqual([]);
    const demoKeys = (await (await post('/signin/owner-keys', { ownerKey: demo.ownerKey }, 'json')).json()).ownerKeys;
    expect((await post(`/signin/owner-keys/${demoKeys[0].keyId}/revoke`, { ownerKey: malloryKey }, 'json')).status).toBe(404);
    // Another client presenting the victim's tokens at /revoke.
    const other = await (await post('/register', { redirect_uris: [appUrl], token_endpoint_auth_method: 'none' } as never, 'json')).json();
    const revoke = await post('/revoke', { token: victim.access_token, client_id: other.client_id });
    expect([revoke.status, (await revoke.json()).error]).toEqual([400, 'unauthorized_client']);
    // A refresh naming another server's resource.
    const foreign = await post('/token', { grant_type: 'refresh_token', refresh_token: victim.refresh_token, client_id: victim.clientId, resource: 'https://evil.example/mcp/demo' });
    expect([foreign.status, (await foreign.json()).error]).toEqual([400, 'invalid_target']);
    expect(await mcpStatus(victim.access_token)).toBe(200);
    expect((await post('/token', { grant_type: 'refresh_token', refresh_token: victim.refresh_token, client_id: victim.clientId })).status).toBe(200);
  });

  it('oversized and malformed parameters are refused; errors go only to a registered redirect URI, with iss and a sentence', async () => {
    const reg = await (await post('/register', { redirect_uris: [appUrl], token_endpoint_auth_method: 'none' } as never, 'json')).json();
    const good = { response_type: 'code', client_id: reg.client_id, redirect_uri: appUrl, code_challenge: 'a'.repeat(43), code_challenge_method: 'S256', resource: `${base}/mcp/demo` };
    const elsewhere = await authorize({ ...good, redirect_uri: 'https://example.org/' });
    expect([elsewhere.status, elsewhere.headers.get('location'), (await elsewhere.json()).error]).toEqual([400, null, 'invalid_request']);
    const refusals = [
      [{ state: 's'.repeat(5000) }, 'state is missing or invalid (too long).'],
      [{ code_challenge: 'c'.repeat(10_000) }, 'code_challenge is missing or invalid.'],
      [{ code_challenge_method: 'plain' }, 'code_challenge_method is missing or invalid.'],
    ] as const;
    for (const [bad, description] of refusals) {
      const res = await authorize({ ...good, ...bad });
      expect(res.status).toBe(302);
      const to = new URL(res.headers.get('location')!);
      expect(to.origin + to.pathname).toBe(appUrl);
      // The oversized state is not echoed; the rest is the OAuth error, a sentence and the issuer (RFC 9207).
      expect(Object.fromEntries(to.searchParams)).toEqual({ error: 'invalid_request', error_description: description, iss: base });
    }
    for (const uris of [['javascript:alert(1)'], ['http://evil.example/cb'], ['https://example.org/#frag'], Array(11).fill(appUrl)]) {
      const res = await post('/register', { redirect_uris: uris, token_endpoint_auth_method: 'none' } as never, 'json');
      expect([res.status, (await res.json()).error]).toEqual([400, 'invalid_client_metadata']);
    }
    const big = await post('/register', { redirect_uris: [appUrl], client_name: 'x'.repeat(100_000) } as never, 'json');
    expect([big.status, await big.json()]).toEqual([400, { error: 'invalid_client_metadata', error_description: 'The client metadata is over 5120 bytes.' }]);
    const meta = await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json();
    expect(meta.token_endpoint_auth_methods_supported).toEqual(['none']);
  });

  it('a flood of token requests from one client is limited without locking other clients out', async () => {
    const flood = await Promise.all(Array.from({ length: 70 }, () => post('/token', { grant_type: 'refresh_token', refresh_token: 'tgr_nothing', client_id: 'tgc_flooder' })));
    expect(flood.filter((r) => r.status === 429).length).toBeGreaterThanOrEqual(10);
    const other = await post('/token', { grant_type: 'refresh_token', refresh_token: 'tgr_nothing', client_id: 'tgc_someone_else' });
    expect(other.status).toBe(400);
  });

  it('the conformance suite\'s authorization-server scenarios pass', async () => {
    const port = await freePort();
    const reg = await (await post('/register', { redirect_uris: [`http://127.0.0.1:${port}/callback`], token_endpoint_auth_method: 'none' } as never, 'json')).json();
    const cli = path.join(WORKSPACE_ROOT, 'node_modules/@modelcontextprotocol/conformance/dist/index.js');
    const suite = startProcess('conformance-as', process.execPath, [cli, 'authorization', '--url', base, '--client-id', reg.client_id, '--resource', `${base}/mcp/demo`, '-p', String(port)]);
    const line = await suite.waitForOutput(/^http:\/\/127\.0\.0\.1:\d+\/authorize\?\S+$/m, 60_000);
    const page = await browser.newPage();
    await page.goto(/(http:\/\/\S+\/authorize\?\S+)/.exec(line)![1]!);
    await page.fill('#ownerKey', demo.ownerKey);
    await page.click('button[value="approve"]');
    const code = await new Promise<number | null>((resolve) => suite.child.on('exit', resolve));
    await page.close();
    expect(suite.output()).toMatch(/authorization-server-metadata-endpoint: \d+ passed, 0 failed/);
    expect(suite.output()).toMatch(/authorization-code-grant: 1 passed, 0 failed/);
    expect(code).toBe(0);
  });
});
