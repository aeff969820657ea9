/**
 * G2, C2 — sign-in the specification's way: stock MCP clients find the authorization server from the MCP URL's 401
 * (RFC 9728), sign in with OAuth 2.1 (PKCE, resource indicators, RFC 9207's `iss`), and the owner consents on the
 * gateway's page in a real browser (headless Chromium). The SDK v2 client pinned to 2026-07-28 names itself with a
 * client ID metadata document; the 1.x client (2025 era) registers dynamically. Tokens are bound to one owner, agent
 * and URL, refresh tokens rotate (a reused one revokes its grant), a replayed code revokes its grant, and owners and admins list and revoke grants.
 */
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type Browser, chromium } from 'playwright-core';
import { freePort, type RunningProcess, startTsProcess, waitFor } from '@tollgate/testing';
import { callToolWhenListed, receiptOf } from './agent-client';

jest.setTimeout(240_000);

const CHROMIUM = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/** An MCP client's OAuth state, in memory (what a desktop client keeps in its keychain). */
class MemoryOAuthClient {
  info?: Record<string, unknown>;
  saved?: { access_token: string; refresh_token?: string; token_type: string };
  verifier = '';
  authorizationUrl?: URL;
  constructor(readonly redirectUrl: string, readonly clientMetadataUrl?: string) {}
  get clientMetadata() {
    return { client_name: 'E2E agent app', redirect_uris: [this.redirectUrl], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' };
  }
  clientInformation() { return this.info as never; }
  saveClientInformation(i: Record<string, unknown>) { this.info = i; }
  tokens() { return this.saved as never; }
  saveTokens(t: MemoryOAuthClient['saved']) { this.saved = t; }
  redirectToAuthorization(url: URL) { this.authorizationUrl = url; }
  saveCodeVerifier(v: string) { this.verifier = v; }
  codeVerifier() { return this.verifier; }
  discovery?: unknown;
  saveDiscoveryState(d: unknown) { this.discovery = d; }
  discoveryState() { return this.discovery as never; }
}

describe('OAuth sign-in for stock MCP clients (G2, C2)', () => {
  let system: RunningProcess;
  let dataDir: string;
  let base: string;
  let demo: { ownerKey: string; adminToken: string };
  let browser: Browser;
  let appServer: http.Server;
  let docServer: https.Server;
  /** The app's redirect URIs (http on loopback, as native apps do) and its client ID: an https metadata document. */
  let app: string;
  let clientId: string;
  const callbacks: URL[] = [];
  const closers: (() => Promise<unknown>)[] = [];

  const admin = (p: string, init: RequestInit = {}) => fetch(`${base}${p}`, { ...init, headers: { authorization: `Bearer ${demo.adminToken}`, 'content-type': 'application/json', ...init.headers } });
  const mcpPost = (slug: string, token?: string) => fetch(`${base}/mcp/${slug}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/list',
      ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {} } } }),
  });

  /** The owner's consent in the browser: the authorization URL, the consent page, the owner key, then back to the app. */
  async function consent(url: URL, decision: 'approve' | 'deny', ownerKey = demo.ownerKey): Promise<URL> {
    const page = await browser.newPage();
    try {
      await page.goto(url.href);
      await page.waitForURL(/\/oauth\/consent\//);
      expect(await page.textContent('h1')).toBe('Allow this app?');
      await page.fill('#ownerKey', ownerKey);
      await page.click(`button[value="${decision}"]`);
      await page.waitForURL(/\/callback\?/);
      return new URL(page.url());
    } finally {
      await page.close();
    }
  }

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-oauth-'));
    chmodSync(dataDir, 0o755);
    const [port, pgPort] = [await freePort(), await freePort()];
    // The client ID metadata document is served over https (clients and the revision require it), with a certificate
    // made for this run that the gateway's process trusts (NODE_EXTRA_CA_CERTS) — the rest of the machine does not.
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', path.join(dataDir, 'app.key'), '-out', path.join(dataDir, 'app.crt'),
      '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    // The document server runs on loopback, which the gateway never dials unless the operator allows it: this
    // test's operator allows that one address and port, nothing else.
    docServer = https.createServer({ key: readFileSync(path.join(dataDir, 'app.key')), cert: readFileSync(path.join(dataDir, 'app.crt')) }, (_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ client_id: clientId, client_name: 'E2E agent app (CIMD)', redirect_uris: [`${app}/callback`],
        grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }));
    });
    await new Promise<void>((r) => docServer.listen(0, '127.0.0.1', r));
    const allowDocServer = { GATEWAY_OUTBOUND_ALLOWED_NETWORKS: '127.0.0.1/32', GATEWAY_OUTBOUND_ALLOWED_PORTS: String((docServer.address() as AddressInfo).port) };
    system = startTsProcess('embedded', 'apps/embedded/src/main.ts', [], { PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), DATA_DIR: path.join(dataDir, 'data'), LOG_LEVEL: 'warn',
      NODE_EXTRA_CA_CERTS: path.join(dataDir, 'app.crt'), ...allowDocServer });
    appServer = http.createServer((req, res) => {
      callbacks.push(new URL(req.url ?? '/', app));
      res.setHeader('content-type', 'text/html');
      res.end('<p>Signed in; return to the app.</p>');
    });
    await new Promise<void>((r) => appServer.listen(0, '127.0.0.1', r));
    app = `http://127.0.0.1:${(appServer.address() as AddressInfo).port}`;
    clientId = `https://127.0.0.1:${(docServer.address() as AddressInfo).port}/oauth/client.json`;
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
    await system.waitForOutput(/Tollgate is running/, 150_000);
    demo = JSON.parse(readFileSync(path.join(dataDir, 'data', 'demo.json'), 'utf8'));
    base = `http://127.0.0.1:${port}`;
  });

  afterAll(async () => {
    for (const close of closers) await close().catch(() => undefined);
    await browser?.close();
    appServer?.close();
    docServer?.close();
    await system?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('an MCP URL says where to sign in: 401 with RFC 9728 metadata, which names the authorization server and its abilities', async () => {
    const res = await mcpPost('demo');
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp/demo", scope="mcp"`);
    expect((await mcpPost('demo', 'tga_not-a-token')).headers.get('www-authenticate')).toContain('error="invalid_token"');
    const prm = await (await fetch(`${base}/.well-known/oauth-protected-resource/mcp/demo`)).json();
    expect(prm).toMatchObject({ resource: `${base}/mcp/demo`, authorization_servers: [base], scopes_supported: ['mcp'] });
    expect((await fetch(`${base}/.well-known/oauth-protected-resource/mcp/no-such-url`)).status).toBe(404);
    const as = await (await fetch(`${base}/.well-known/oauth-authorization-server`)).json();
    expect(as).toMatchObject({
      issuer: base, authorization_endpoint: `${base}/authorize`, token_endpoint: `${base}/token`, code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true, authorization_response_iss_parameter_supported: true,
    });
  });

  it('the SDK v2 client pinned to 2026-07-28 signs in with a client ID metadata document and consent in Chromium, then makes a paid call', async () => {
    const oauth = new MemoryOAuthClient(`${app}/callback`, clientId);
    const mcpUrl = new URL(`${base}/mcp/demo`);
    const first = new ModernClient({ name: 'e2e-oauth-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    const transport = new ModernTransport(mcpUrl, { authProvider: oauth as never });
    await expect(first.connect(transport)).rejects.toThrow(/unauthori/i);
    expect(oauth.authorizationUrl?.searchParams.get('client_id')).toBe(clientId);
    expect(oauth.authorizationUrl?.searchParams.get('resource')).toBe(`${base}/mcp/demo`);
    const back = await consent(oauth.authorizationUrl!, 'approve');
    expect(back.searchParams.get('iss')).toBe(base);
    await transport.finishAuth(back.searchParams);
    expect(oauth.saved?.access_token).toMatch(/^tga_/);

    const agent = new ModernClient({ name: 'e2e-oauth-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await agent.connect(new ModernTransport(mcpUrl, { authProvider: oauth as never }));
    closers.push(() => agent.close());
    const result = await callToolWhenListed(agent as never, 'reverse_text', { text: 'signed in with oauth' });
    expect(result.isError).toBeFalsy();
    expect(receiptOf(result)?.held).toMatchObject({ asset: 'USDC', amountMinor: '250000' }); // a paid call, charged to the demo owner

    // The grant: this app, as a new agent of the demo owner, on /mcp/demo — listed for the owner and the admin.
    const mine = await (await fetch(`${base}/oauth/grants`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ownerKey: demo.ownerKey }) })).json();
    expect(mine.grants).toContainEqual(expect.objectContaining({ clientId, clientName: 'E2E agent app (CIMD)', mcpPath: '/mcp/demo', revokedAt: null }));
    const all = await (await admin('/admin/oauth/grants')).json();
    expect(all.grants.map((g: { clientId: string }) => g.clientId)).toContain(clientId);
  });

  it('the 1.x client (2025 era) registers dynamically and signs in the same way; its token is good for that URL only', async () => {
    const oauth = new MemoryOAuthClient(`${app}/callback`);
    const mcpUrl = new URL(`${base}/mcp/demo`);
    const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: oauth as never });
    await expect(new Client({ name: 'e2e-oauth-2025', version: '1.0.0' }).connect(transport)).rejects.toThrow(/unauthori/i);
    expect(oauth.info?.['client_id']).toMatch(/^tgc_|^[0-9a-f-]{36}$/);
    const back = await consent(oauth.authorizationUrl!, 'approve');
    await transport.finishAuth(back.searchParams.get('code')!);

    const agent = new Client({ name: 'e2e-oauth-2025', version: '1.0.0' });
    await agent.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: oauth as never }));
    closers.push(() => agent.close());
    expect((await callToolWhenListed(agent, 'word_count', { text: 'legacy era' })).isError).toBeFalsy();

    // Another URL of the same owner: the token was granted for /mcp/demo, so elsewhere it is no credential (RFC 8707).
    expect((await admin('/admin/mcp-urls', { method: 'POST', body: JSON.stringify({ slug: 'elsewhere' }) })).status).toBe(201);
    const there = await mcpPost('elsewhere', oauth.saved!.access_token);
    expect(there.status).toBe(401);
    expect((await mcpPost('demo', oauth.saved!.access_token)).status).toBe(200);
  });

  /** A sign-in by hand (what any client does): PKCE, the consent form, the code. */
  async function manualCode(oauth: MemoryOAuthClient, decision: 'approve' | 'deny' = 'approve') {
    const verifier = randomBytes(32).toString('base64url');
    const auth = new URL(`${base}/authorize`);
    for (const [k, v] of Object.entries({ response_type: 'code', client_id: clientId, redirect_uri: oauth.redirectUrl, state: 'st-1',
      code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256', resource: `${base}/mcp/demo`, scope: 'mcp' })) auth.searchParams.set(k, v);
    const back = await consent(auth, decision);
    return { back, verifier };
  }
  const token = (params: Record<string, string>) => fetch(`${base}/token`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(params).toString() });

  it('a denial answers access_denied with state and iss; a code is redeemed once, and its replay revokes the grant', async () => {
    const oauth = new MemoryOAuthClient(`${app}/callback`, clientId);
    const denied = await manualCode(oauth, 'deny');
    expect(Object.fromEntries(denied.back.searchParams)).toMatchObject({ error: 'access_denied', state: 'st-1', iss: base });

    const { back, verifier } = await manualCode(oauth);
    const redeem = { grant_type: 'authorization_code', code: back.searchParams.get('code')!, code_verifier: verifier, client_id: clientId, redirect_uri: oauth.redirectUrl, resource: `${base}/mcp/demo` };
    expect((await token({ ...redeem, code_verifier: randomBytes(32).toString('base64url') })).status).toBe(400); // PKCE: wrong verifier
    const tokens = await (await token(redeem)).json();
    expect(tokens).toMatchObject({ token_type: 'Bearer', scope: 'mcp', expires_in: 3600 });
    expect((await mcpPost('demo', tokens.access_token)).status).toBe(200);
    const replay = await token(redeem);
    expect(replay.status).toBe(400);
    expect((await replay.json()).error).toBe('invalid_grant');
    await waitFor('the replayed code\'s grant revoked', async () => (await mcpPost('demo', tokens.access_token)).status === 401, 5000, 200);
  });

  /** A fresh grant of the demo URL: its first tokens, from a code the owner approved. */
  const signedIn = async () => {
    const oauth = new MemoryOAuthClient(`${app}/callback`, clientId);
    const { back, verifier } = await manualCode(oauth);
    return (await token({ grant_type: 'authorization_code', code: back.searchParams.get('code')!, code_verifier: verifier, client_id: clientId, redirect_uri: oauth.redirectUrl })).json();
  };
  const refreshWith = (refreshToken: string) => token({ grant_type: 'refresh_token', client_id: clientId, refresh_token: refreshToken });

  it('a rotated-away refresh token presented again revokes the grant: every token of it stops working', async () => {
    const first = await signedIn();
    const second = await (await refreshWith(first.refresh_token)).json();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await mcpPost('demo', second.access_token)).status).toBe(200);
    const reuse = await refreshWith(first.refresh_token); // a copied token, or a replay
    expect(reuse.status).toBe(400);
    expect(await reuse.json()).toMatchObject({ error: 'invalid_grant', error_description: expect.stringMatching(/already used: the grant is revoked/) });
    expect((await refreshWith(second.refresh_token)).status).toBe(400);
    await waitFor('the reused grant\'s access tokens revoked', async () => (await mcpPost('demo', second.access_token)).status === 401, 5000, 200);
  });

  it('refresh tokens rotate, and the owner\'s revocation ends every token of the grant', async () => {
    const first = await signedIn();
    const second = await (await refreshWith(first.refresh_token)).json();
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await mcpPost('demo', second.access_token)).status).toBe(200);

    const { grants } = await (await fetch(`${base}/oauth/grants`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ownerKey: demo.ownerKey }) })).json();
    const live = grants.filter((g: { revokedAt: string | null; liveAccessTokens: number }) => !g.revokedAt && g.liveAccessTokens === 2);
    expect(live).toHaveLength(1);
    const wrongKey = await fetch(`${base}/oauth/grants/${live[0].grantId}/revoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ownerKey: 'not-the-key' }) });
    expect(wrongKey.status).toBe(403);
    const revoked = await fetch(`${base}/oauth/grants/${live[0].grantId}/revoke`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ownerKey: demo.ownerKey }) });
    expect(revoked.status).toBe(200);
    for (const t of [first.access_token, second.access_token]) expect((await mcpPost('demo', t)).status).toBe(401);
    expect((await refreshWith(second.refresh_token)).status).toBe(400);
    expect((await admin(`/admin/oauth/grants/${live[0].grantId}/revoke`, { method: 'POST' })).status).toBe(404);
  });
});
