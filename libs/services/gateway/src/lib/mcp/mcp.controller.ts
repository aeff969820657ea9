import { All, Controller, Param, Post, Req, Res } from '@nestjs/common';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { type Request, type Response } from 'express';
import { z } from 'zod';
import { createLogger } from '@tollgate/observability';
import { AuthenticateUseCase, type CallerIdentity } from '../authenticate/authenticate.usecase';
import { CallToolUseCase } from '../call-tool/call-tool.usecase';
import { GATEWAY } from '../gateway.constants';

const logger = createLogger(GATEWAY);

const AUTH_FAILURES = {
  MCP_URL_NOT_FOUND: { status: 404, message: 'No MCP server at this URL' },
  MCP_CREDENTIAL_INVALID: { status: 401, message: 'The credential is missing, malformed, revoked or unknown.' },
} as const;

function jsonRpcError(res: Response, status: number, code: string, message: string): void {
  if (status === 401) res.setHeader('WWW-Authenticate', 'Bearer');
  res.status(status).json({ jsonrpc: '2.0', id: null, error: { code: -32001, message, data: { code } } });
}

/**
 * The agents' MCP endpoint: `/mcp/<slug>`, Streamable HTTP, stateless (a
 * fresh server per request, so any gateway instance can answer any request).
 * Identity comes only from the bearer credential and the URL.
 */
@Controller('mcp')
export class McpController {
  constructor(
    private readonly authenticate: AuthenticateUseCase,
    private readonly callTool: CallToolUseCase,
  ) {}

  @Post(':slug')
  async post(@Param('slug') slug: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const auth = await this.authenticate.execute(slug, req.headers.authorization);
    if (!auth.ok) {
      const f = AUTH_FAILURES[auth.code];
      return jsonRpcError(res, f.status, auth.code, f.message);
    }
    const server = this.buildServer(auth.identity);
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    try {
      await server.connect(transport);
      await transport.handleRequest(req, res, req.body);
    } catch (err) {
      logger.error({ err }, 'MCP request failed');
      if (!res.headersSent) res.status(500).json({ jsonrpc: '2.0', id: null, error: { code: -32603, message: 'Internal error' } });
    }
  }

  /** Stateless: no server-initiated stream and no session to delete. */
  @All(':slug')
  other(@Res() res: Response): void {
    res.setHeader('Allow', 'POST');
    res.status(405).json({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Method not allowed.' } });
  }

  private buildServer(caller: CallerIdentity): McpServer {
    const server = new McpServer({ name: 'tollgate', version: '0.1.0' }, { capabilities: { tools: {} } });
    server.registerTool(
      'call_tool',
      {
        description: 'Runs a catalog tool by name at that tool\'s price. Payment and idempotency metadata travel in the request _meta.',
        inputSchema: z
          .object({
            name: z.string().min(1).max(200).describe('The catalog tool to run (not a discovery tool).'),
            arguments: z.record(z.string(), z.unknown()).optional().describe('Arguments matching the tool\'s input schema; defaults to {}.'),
          })
          .strict(),
      },
      async ({ name, arguments: args }) => this.callTool.execute(caller, name, args ?? {}) as never,
    );
    return server;
  }
}
