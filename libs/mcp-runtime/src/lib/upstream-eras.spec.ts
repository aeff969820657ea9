import { createServer, type IncomingMessage, type Server as HttpServer } from 'node:http';
import { type AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer as ModernServer } from '@modelcontextprotocol/server';
import { McpServer as LegacyServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { callUpstreamTool, closeUpstreamSessions, listUpstreamTools, type UpstreamCall, upstreamEras } from './upstream-client';
import { LEGACY_VERDICT_MS, UpstreamEras } from './upstream-eras';

/**
 * Execution and discovery reach providers of both eras — a 2026-07-28 provider (SDK v2) and a
 * 2025-era one (SDK 1.x) — modern first, remembering which era each speaks, and never performing a call twice.
 * Real loopback HTTP servers that count what reaches them.
 */
describe('upstream providers of both eras', () => {
  const scope = { actor: { tenantId: 'o', userId: 'a' }, workspaceId: 'o', toolsetId: 'u', serverName: 'p' };
  const seen = { modern: [] as string[], legacy: [] as string[] };
  const performed = { modern: 0, legacy: 0 };
  let modernHttp: HttpServer;
  let legacyHttp: HttpServer;
  let modernUrl: string;
  let legacyUrl: string;

  const echo = (era: 'modern' | 'legacy') => async () => {
    performed[era]++;
    return { content: [{ type: 'text' as const, text: `${era} ran` }] };
  };
  function modernServer(): ModernServer {
    const server = new ModernServer({ name: 'modern', version: '1.0.0' });
    server.registerTool('echo', { description: 'echoes' }, echo('modern'));
    return server;
  }
  function legacyServer(): LegacyServer {
    const server = new LegacyServer({ name: 'legacy', version: '1.0.0' });
    server.registerTool('echo', { description: 'echoes' }, echo('legacy'));
    return server;
  }

  async function body(req: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
  }

  async function listen(server: HttpServer): Promise<string> {
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
  }

  beforeAll(async () => {
    const modern = toNodeHandler(createMcpHandler(modernServer, { legacy: 'reject' }));
    modernHttp = createServer((req, res) => void body(req).then((b) => {
      seen.modern.push((b as { method?: string } | undefined)?.method ?? req.method ?? '');
      return modern(req, res, b);
    }));
    legacyHttp = createServer((req, res) => void body(req).then(async (b) => {
      seen.legacy.push((b as { method?: string } | undefined)?.method ?? req.method ?? '');
      const server = legacyServer();
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await server.connect(transport);
      await transport.handleRequest(req, res, b);
    }));
    [modernUrl, legacyUrl] = [await listen(modernHttp), await listen(legacyHttp)];
  });

  afterAll(async () => {
    await closeUpstreamSessions();
    for (const s of [modernHttp, legacyHttp]) await new Promise<void>((ok) => { s.closeAllConnections(); s.close(() => ok()); });
  });

  const call = (endpoint: string, key: string): UpstreamCall => ({ target: { transport: 'http', endpoint }, scope, toolName: 'echo', arguments: {}, deadlineAt: Date.now() + 5000, intentId: key, operationKey: key });

  it('calls a 2026-07-28 provider in its era: one probe, then calls without a handshake; each call performed once', async () => {
    expect((await callUpstreamTool(call(modernUrl, 'm1'))).content).toEqual([{ type: 'text', text: 'modern ran' }]);
    expect(upstreamEras.eraOf(modernUrl)).toBe('modern');
    expect((await listUpstreamTools({ target: { transport: 'http', endpoint: modernUrl }, deadlineAt: Date.now() + 5000 })).tools.map((t) => t.name)).toEqual(['echo']);
    expect(seen.modern.filter((m) => m === 'server/discover')).toHaveLength(1);
    expect(seen.modern).not.toContain('initialize');
    expect(performed.modern).toBe(1);
  });

  it('falls back to the 2025 handshake for a 2025-era provider, once, and remembers it', async () => {
    expect((await callUpstreamTool(call(legacyUrl, 'l1'))).content).toEqual([{ type: 'text', text: 'legacy ran' }]);
    expect(upstreamEras.eraOf(legacyUrl)).toBe('legacy');
    await listUpstreamTools({ target: { transport: 'http', endpoint: legacyUrl }, deadlineAt: Date.now() + 5000 });
    // The remembered verdict: the listing's fresh session went straight to initialize, without a second probe.
    expect(seen.legacy.filter((m) => m === 'server/discover')).toHaveLength(1);
    expect(seen.legacy.filter((m) => m === 'initialize')).toHaveLength(2);
    expect(performed.legacy).toBe(1);
  });
});

describe('UpstreamEras (pure)', () => {
  it('keeps a modern verdict, dates a legacy one, forgets on request', () => {
    let now = 0;
    const eras = new UpstreamEras(() => now);
    const modernClient = { getDiscoverResult: () => ({ supportedVersions: ['2026-07-28'] }) } as never;
    const legacyClient = { getDiscoverResult: () => undefined } as never;
    eras.learn('m', modernClient);
    eras.learn('l', legacyClient);
    expect(eras.prior('m')).toMatchObject({ kind: 'modern' });
    expect(eras.prior('l')).toEqual({ kind: 'legacy' });
    now = LEGACY_VERDICT_MS + 1;
    expect(eras.prior('l')).toBeUndefined();
    expect(eras.prior('m')).toMatchObject({ kind: 'modern' });
    eras.forget('m');
    expect(eras.prior('m')).toBeUndefined();
  });
});
