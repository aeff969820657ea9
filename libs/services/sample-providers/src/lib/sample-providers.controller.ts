import { randomUUID } from 'node:crypto';
import { All, Body, Controller, Delete, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { type Server } from '@modelcontextprotocol/sdk/server/index.js';
import { type McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { type Request, type Response } from 'express';
import { createCatalogDemoServer } from './catalog-demo.server';
import { MutableToolsProvider } from './mutable-tools.server';
import { createBulkyToolsServer, createCycleToolsServer, createOversizedToolsServer, createPagedToolsServer } from './paging.servers';
import { createOddToolsServer, createSlowToolsServer, FlakyProviders, ReviewTicketsProvider } from './call-life.servers';
import { createTextToolsServer } from './text-tools.server';

const reviewTickets = new ReviewTicketsProvider();
const flaky = new FlakyProviders();

const STATELESS: Record<string, () => McpServer | Server> = {
  'text-tools': createTextToolsServer,
  'catalog-demo': createCatalogDemoServer,
  'paged-tools': createPagedToolsServer,
  'cycle-tools': createCycleToolsServer,
  'oversized-tools': createOversizedToolsServer,
  'bulky-tools': createBulkyToolsServer,
  'slow-tools': createSlowToolsServer,
  'review-tickets': () => reviewTickets.createServer(),
  'flaky-a': () => flaky.createServer('flaky-a'),
  'flaky-b': () => flaky.createServer('flaky-b'),
  'odd-tools': createOddToolsServer,
};

const notAllowed = (res: Response) =>
  res.status(405).setHeader('Allow', 'POST').json({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Method not allowed.' } });

/** The session-keeping provider whose contract can change: `/providers/mutable-tools/mcp`, plus its test knob. */
@Controller('providers/mutable-tools')
export class MutableToolsController {
  private readonly provider = new MutableToolsProvider();
  private readonly sessions = new Map<string, StreamableHTTPServerTransport>();

  @Post('variant')
  @HttpCode(200)
  setVariant(@Body() body: { variant: number }): { variant: number } {
    this.provider.setVariant(Number(body.variant));
    return { variant: Number(body.variant) };
  }

  @Post('mcp')
  async post(@Req() req: Request, @Res() res: Response): Promise<void> {
    const id = req.headers['mcp-session-id'];
    let transport = typeof id === 'string' ? this.sessions.get(id) : undefined;
    if (!transport) {
      if (!isInitializeRequest(req.body)) {
        res.status(404).json({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } });
        return;
      }
      const t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (sid) => void this.sessions.set(sid, t) });
      t.onclose = () => t.sessionId && this.sessions.delete(t.sessionId);
      await this.provider.createServer().connect(t);
      transport = t;
    }
    await transport.handleRequest(req, res, req.body);
  }

  @Get('mcp')
  async stream(@Req() req: Request, @Res() res: Response): Promise<void> {
    const t = this.sessions.get(String(req.headers['mcp-session-id']));
    if (!t) return void res.status(404).end();
    await t.handleRequest(req, res);
  }

  @Delete('mcp')
  async end(@Req() req: Request, @Res() res: Response): Promise<void> {
    const t = this.sessions.get(String(req.headers['mcp-session-id']));
    if (!t) return void res.status(404).end();
    await t.handleRequest(req, res);
  }
}

/** The stateless sample providers over Streamable HTTP: `/providers/<name>/mcp`. */
@Controller('providers')
export class SampleProvidersController {
  /** What the review-ticket service holds, for tests: a retried write must never make two tickets. */
  @Get('review-tickets/tickets')
  tickets() {
    return { tickets: reviewTickets.tickets, inFlight: reviewTickets.inFlight, received: reviewTickets.received };
  }

  /** Test knobs of the review-ticket service. */
  @Post('review-tickets/faults')
  @HttpCode(200)
  reviewFaults(@Body() body: Partial<ReviewTicketsProvider['faults']>) {
    Object.assign(reviewTickets.faults, body);
    return reviewTickets.faults;
  }

  /** Test knob: the next N tool calls to a flaky provider are answered 503. */
  @Post('flaky/faults')
  @HttpCode(200)
  flakyFaults(@Body() body: Record<string, number>) {
    Object.assign(flaky.failuresLeft, body);
    return flaky.failuresLeft;
  }

  @Post(':name/mcp')
  async post(@Param('name') name: string, @Req() req: Request, @Res() res: Response): Promise<void> {
    const body = req.body as { method?: string; params?: { name?: string; arguments?: Record<string, string>; _meta?: Record<string, unknown> } };
    if (flaky.shouldFail(name, body)) return void res.status(503).json({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Service unavailable.' } });
    if (name === 'review-tickets' && reviewTickets.faults.dropNextResponse && body?.method === 'tools/call' && body.params?.name === 'create_review_ticket') {
      // The write happens, then the connection is cut before any response: the outcome is unknown to the caller.
      reviewTickets.faults.dropNextResponse = false;
      const key = body.params._meta?.['tollgate/operationKey'];
      await reviewTickets.create(body.params.arguments ?? {}, typeof key === 'string' ? key : null);
      return void req.socket.destroy();
    }
    const factory = STATELESS[name];
    if (!factory) return void res.status(404).json({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'No such sample provider.' } });
    const server = factory();
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    res.on('close', () => {
      void transport.close();
      void server.close();
    });
    await server.connect(transport);
    await transport.handleRequest(req, res, req.body);
  }

  @All(':name/mcp')
  other(@Res() res: Response): void {
    notAllowed(res);
  }
}
