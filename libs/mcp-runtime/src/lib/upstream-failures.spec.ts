import { createServer, type Server } from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { type AddressInfo } from 'node:net';
import { callUpstreamTool, type UpstreamCall, UpstreamError } from './upstream-client';

/**
 * The upstream client tells a call that never left (the platform knows nothing was performed) from
 * one whose outcome is unknown. Real loopback sockets: a port nothing listens on, an MCP server whose tool takes the
 * call and never answers.
 */
describe('upstream failures: not sent vs unknown', () => {
  const scope = { actor: { tenantId: 'o', userId: 'a' }, workspaceId: 'o', toolsetId: 'u', serverName: 'p' };
  const call = (endpoint: string, deadlineAt: number): UpstreamCall => ({ target: { transport: 'http', endpoint }, scope, toolName: 't', arguments: {}, deadlineAt, intentId: 'i', operationKey: 'k' });
  const failure = async (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e as UpstreamError);
  let silent: Server;
  let silentUrl: string;

  beforeAll(async () => {
    // A real MCP server whose tool takes the call and never answers: whatever was sent may have been performed.
    silent = createServer((req, res) => {
      const server = new McpServer({ name: 'silent', version: '1.0.0' });
      server.registerTool('t', { description: 'never answers' }, () => new Promise(() => undefined));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      void server.connect(transport).then(() => transport.handleRequest(req, res));
    });
    await new Promise<void>((ok) => silent.listen(0, '127.0.0.1', ok));
    silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`;
  });
  afterAll(() => new Promise<void>((ok) => { silent.closeAllConnections(); silent.close(() => ok()); }));

  it('a deadline already passed: not sent, nothing performed', async () => {
    const e = await failure(callUpstreamTool(call(silentUrl, Date.now() - 1)));
    expect(e).toBeInstanceOf(UpstreamError);
    expect(e).toMatchObject({ kind: 'not_sent', message: 'the deadline passed before the upstream was called' });
  });

  it('a provider nobody listens for: no session, the call not sent', async () => {
    const e = await failure(callUpstreamTool(call('http://127.0.0.1:9/mcp', Date.now() + 3000)));
    expect(e).toMatchObject({ kind: 'not_sent' });
  });

  it('a provider that takes the call and never answers: the outcome is unknown (deadline), not "not sent"', async () => {
    const e = await failure(callUpstreamTool(call(silentUrl, Date.now() + 1500)));
    expect(e).toMatchObject({ kind: 'deadline' });
  });
});
