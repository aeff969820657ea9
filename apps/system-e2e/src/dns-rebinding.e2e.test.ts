/**
 * Secure by default (the MCP transport's DNS-rebinding rule): on `npm start` (loopback), the MCP and sign-in routes
 * refuse a request whose Host or Origin names a foreign site with 403 — before any credential is looked at — and
 * serve the same request from a localhost origin, and from a client that sends no Origin (every non-browser client).
 */
import { request } from 'node:http';
import { type EmbeddedSystem, startEmbeddedSystem } from './agent-client';

jest.setTimeout(180_000);

/** A raw POST (fetch may not set Host). */
function post(url: string, headers: Record<string, string>, body: unknown): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...headers } }, (res) => {
      let text = '';
      res.on('data', (c: Buffer) => (text += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

describe('DNS-rebinding protection on npm start', () => {
  let system: EmbeddedSystem;
  const list = { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} };

  beforeAll(async () => {
    system = await startEmbeddedSystem('dns-rebinding');
  });
  afterAll(async () => {
    await system?.stop();
  });

  const mcp = () => system.demo['mcpUrl']!;
  const auth = () => ({ authorization: `Bearer ${system.demo['credential']}` });

  it('a foreign Host is refused with 403, even with a valid credential', async () => {
    const r = await post(mcp(), { ...auth(), host: 'evil.example:80' }, list);
    expect(r.status).toBe(403);
    expect(JSON.parse(r.body)).toMatchObject({ error: { data: { code: 'MCP_ORIGIN_NOT_ALLOWED' } } });
  });

  it('a foreign Origin is refused with 403 on the MCP and the sign-in routes', async () => {
    expect((await post(mcp(), { ...auth(), origin: 'http://evil.example' }, list)).status).toBe(403);
    expect((await post(`${system.base}/signin/device`, { origin: 'https://evil.example' }, { deviceName: 'x', slug: 'demo' })).status).toBe(403);
    expect((await post(mcp(), { ...auth(), origin: 'null' }, list)).status).toBe(403);
  });

  it('a localhost Origin, and no Origin at all, are served', async () => {
    const fromPage = await post(mcp(), { ...auth(), origin: 'http://localhost:6274', 'mcp-protocol-version': '2025-11-25' }, list);
    expect(fromPage.status).toBe(200);
    expect(Array.isArray(JSON.parse(fromPage.body).result.tools)).toBe(true);
    const plain = await post(mcp(), { ...auth(), 'mcp-protocol-version': '2025-11-25' }, list);
    expect(plain.status).toBe(200);
  });
});
