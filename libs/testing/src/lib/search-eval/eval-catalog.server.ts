import { createServer, type Server as HttpServer } from 'node:http';
import { type AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { EVAL_CATALOG } from './eval-catalog.data';

/**
 * The evaluation catalog as a plain upstream lists it (names and descriptions, one page), over Streamable HTTP on a
 * loopback port, stateless: a real MCP server the embedded system registers and syncs like any provider.
 */
export async function startEvalCatalogServer(): Promise<{ url: string; close(): Promise<void> }> {
  const tools = EVAL_CATALOG.map(({ name, description }) => ({ name, description, inputSchema: { type: 'object' as const, properties: { input: { type: 'string' } } } }));
  const http: HttpServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const server = new Server({ name: 'eval-catalog', version: '1.0.0' }, { capabilities: { tools: {} } });
      server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
      server.setRequestHandler(CallToolRequestSchema, async (r) => ({ content: [{ type: 'text', text: `${r.params.name} ran` }] }));
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      res.on('close', () => void transport.close().then(() => server.close()));
      const body = chunks.length > 0 ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
      void server.connect(transport).then(() => transport.handleRequest(req, res, body));
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/mcp`, close: () => new Promise((resolve) => http.close(() => resolve())) };
}
