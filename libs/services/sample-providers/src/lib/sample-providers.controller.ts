import { All, Controller, Post, Req, Res } from '@nestjs/common';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { type Request, type Response } from 'express';
import { createTextToolsServer } from './text-tools.server';

/** Serves the sample providers over Streamable HTTP, stateless: `/providers/text-tools/mcp`. */
@Controller('providers/text-tools')
export class SampleProvidersController {
  @Post('mcp')
  async post(@Req() req: Request, @Res() res: Response): Promise<void> {
    const server = createTextToolsServer();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  }

  @All('mcp')
  other(@Res() res: Response): void {
    res.status(405).setHeader('Allow', 'POST').json({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Method not allowed.' } });
  }
}
