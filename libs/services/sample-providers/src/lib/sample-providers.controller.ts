import { randomUUID } from 'node:crypto';
import { All, Body, Controller, Delete, Get, HttpCode, Inject, type OnModuleDestroy, Param, Post, Req, Res, UseGuards } from '@nestjs/common';
import { adminTokenGuard } from '@tollgate/http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, type McpServerFactory } from '@modelcontextprotocol/server';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { type Request, type Response } from 'express';
import { createCatalogDemoServer } from './catalog-demo.server';
import { ConformanceFixtures } from './conformance-fixtures.server';
import { MutableToolsProvider } from './mutable-tools.server';
import { createBulkyToolsServer, createCycleToolsServer, createOversizedToolsServer, createPagedToolsServer } from './paging.servers';
import { createOddToolsServer, createSlowToolsServer, FlakyProviders, ReviewTicketsProvider } from './call-life.servers';
import { createMeteredToolsServer } from './metered-tools.server';
import { createTextToolsServer } from './text-tools.server';
import { SAMPLE_PROVIDERS_OPTIONS, type SampleProvidersOptions } from './sample-providers.options';

const reviewTickets = new ReviewTicketsProvider();
const flaky = new FlakyProviders();

const STATELESS: Record<string, McpServerFactory> = {
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
  summaries: () => createMeteredToolsServer({ fixtures: false }),
  'metered-fixtures': () => createMeteredToolsServer({ fixtures: true }),
};

/**
 * Each stateless provider serves both MCP eras on its URL: 2026-07-28 (server/discover, the
 * `_meta` envelope) and, per request, the 2025 handshake for older clients. One handler per provider, made once.
 */
const HANDLERS = new Map(Object.entries(STATELESS).map(([name, factory]) => [name, toNodeHandler(createMcpHandler(factory, { legacy: 'stateless' }))]));
// The conformance fixtures keep one piece of state (a tool that comes and goes), so their handler is their own.
HANDLERS.set('conformance-fixtures', toNodeHandler(new ConformanceFixtures().handler));

const notAllowed = (res: Response) =>
  res.status(405).setHeader('Allow', 'POST').json({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Method not allowed.' } });

interface Session {
  transport: StreamableHTTPServerTransport;
  lastSeenAt: number;
}

/**
 * The session-keeping provider whose contract can change: `/providers/mutable-tools/mcp`, plus its test knob. Sessions
 * are bounded: at most `maxSessions` open, each closed after `sessionIdleMs` without a request.
 */
@Controller('providers/mutable-tools')
@UseGuards(adminTokenGuard(SAMPLE_PROVIDERS_OPTIONS))
export class MutableToolsController implements OnModuleDestroy {
  private readonly provider = new MutableToolsProvider();
  private readonly sessions = new Map<string, Session>();
  private readonly sweeper: NodeJS.Timeout;

  constructor(@Inject(SAMPLE_PROVIDERS_OPTIONS) private readonly options: SampleProvidersOptions) {
    this.sweeper = setInterval(() => this.closeIdle(), Math.max(1000, Math.floor(options.sessionIdleMs / 2)));
    this.sweeper.unref();
  }

  onModuleDestroy(): void {
    clearInterval(this.sweeper);
    for (const s of this.sessions.values()) void s.transport.close();
  }

  @Post('variant')
  @HttpCode(200)
  setVariant(@Body() body: { variant: number }): { variant: number } {
    this.provider.setVariant(Number(body.variant));
    return { variant: Number(body.variant) };
  }

  /** How many sessions are open (tests of the bounds). */
  @Get('sessions')
  count(): { open: number; max: number } {
    return { open: this.sessions.size, max: this.options.maxSessions };
  }

  @Post('mcp')
  async post(@Req() req: Request, @Res() res: Response): Promise<void> {
    let transport = this.session(req);
    if (!transport) {
      if (!isInitializeRequest(req.body)) {
        res.status(404).json({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } });
        return;
      }
      this.closeIdle();
      if (this.sessions.size >= this.options.maxSessions) {
        res.status(503).setHeader('Retry-After', '1').json({ jsonrpc: '2.0', id: null, error: { code: -32000, message: 'Too many open sessions.' } });
        return;
      }
      transport = await this.open();
    }
    await transport.handleRequest(req, res, req.body);
  }

  @Get('mcp')
  async stream(@Req() req: Request, @Res() res: Response): Promise<void> {
    const t = this.session(req);
    if (!t) return void res.status(404).end();
    await t.handleRequest(req, res);
  }

  @Delete('mcp')
  async end(@Req() req: Request, @Res() res: Response): Promise<void> {
    const t = this.session(req);
    if (!t) return void res.status(404).end();
    await t.handleRequest(req, res);
  }

  private session(req: Request): StreamableHTTPServerTransport | undefined {
    const s = this.sessions.get(String(req.headers['mcp-session-id']));
    if (s) s.lastSeenAt = Date.now();
    return s?.transport;
  }

  private async open(): Promise<StreamableHTTPServerTransport> {
    const t: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sid) => void this.sessions.set(sid, { transport: t, lastSeenAt: Date.now() }),
    });
    t.onclose = () => t.sessionId && this.sessions.delete(t.sessionId);
    await this.provider.createServer().connect(t);
    return t;
  }

  private closeIdle(now = Date.now()): void {
    for (const [id, s] of this.sessions) {
      if (now - s.lastSeenAt < this.options.sessionIdleMs) continue;
      this.sessions.delete(id);
      void s.transport.close();
    }
  }
}

/** The stateless sample providers over Streamable HTTP: `/providers/<name>/mcp`. */
@Controller('providers')
@UseGuards(adminTokenGuard(SAMPLE_PROVIDERS_OPTIONS))
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
    const overrides = body?.method === 'tools/call' && body.params?.name === 'report_usage' ? body.params.arguments?.['settlementOverrides'] : undefined;
    // The metered fixture can answer as an x402 server does: what it used in the Settlement-Overrides header.
    if (name === 'metered-fixtures' && typeof overrides === 'string') res.setHeader('Settlement-Overrides', overrides);
    const handler = HANDLERS.get(name);
    if (!handler) return void res.status(404).json({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'No such sample provider.' } });
    await handler(req, res, req.body);
  }

  @All(':name/mcp')
  other(@Res() res: Response): void {
    notAllowed(res);
  }
}
