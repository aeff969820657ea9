import { type Server } from 'node:http';
import { type Socket } from 'node:net';
import { type INestApplication, ValidationPipe } from '@nestjs/common';
import { json, type NextFunction, type Request, type Response, urlencoded } from 'express';
import { NestFactory } from '@nestjs/core';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { browserGuard, type BrowserGuardOptions } from './browser-guard';
import { createLogger, httpRequestSeconds, httpServerSpan, NestPinoLogger, type Logger, startTracing, stopTracing, tracingOn } from '@tollgate/observability';

export interface StartOptions {
  service: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  module: any;
  host: string;
  port: number;
  /** Off when the host orders its own shutdown (embedded mode stops PostgreSQL after the app). */
  shutdownHooks?: boolean;
  /**
   * Which proxies in front of the app are trusted to state the client address in `X-Forwarded-For` (Express's
   * `trust proxy`: a comma-separated list of addresses, CIDRs or `loopback` / `linklocal` / `uniquelocal`). Empty: none,
   * `req.ip` is the socket's peer.
   */
  trustedProxies?: string;
  /**
   * A connection must deliver a complete request head within this many ms of opening (default 10 s), or it is closed:
   * idle sockets that never send a byte and slow-header clients do not hold the server. Later requests on a kept-alive
   * connection are bounded by Node's `headersTimeout` / `keepAliveTimeout`, the body by `requestTimeout`.
   */
  requestHeadTimeoutMs?: number;
  /** Serves the OpenAPI document of the app's controllers at `/docs` (JSON at `/docs-json`). */
  openApi?: { title: string; description: string };
  /** Express handlers of the app's own, mounted at the root after body parsing and before the controllers' routes. */
  mount?: (app: INestApplication) => void;
  /** Host and Origin validation on the routes a browser could be made to call (see `browserGuard`). */
  browserGuard?: Omit<BrowserGuardOptions, 'bindHost'>;
}

/**
 * Boots a NestJS app the same way for every service: JSON logs, strict DTO
 * validation, graceful shutdown on SIGTERM/SIGINT (consumers finish, outbox
 * flushes, then connections close).
 */
/**
 * Behind a proxy that is not trusted, every client shares the proxy's address, so the per-address limits (failed
 * credentials, sign-ins, OAuth) become one bucket for everyone: said once, loudly, so the operator sets
 * GATEWAY_TRUSTED_PROXIES.
 */
function warnOfUntrustedProxy(logger: Logger) {
  let warned = false;
  return (req: { headers: Record<string, unknown>; socket: { remoteAddress?: string } }, _res: unknown, next: () => void) => {
    if (!warned && req.headers['x-forwarded-for'] !== undefined) {
      warned = true;
      logger.warn({ peer: req.socket.remoteAddress }, 'a request came through a proxy that is not trusted: every client behind it shares one rate-limit address; set GATEWAY_TRUSTED_PROXIES to that proxy');
    }
    next();
  };
}

export async function startNestApp(options: StartOptions): Promise<{ app: INestApplication; logger: Logger; url: string }> {
  const logger = createLogger(options.service);
  // Before the modules start (their consumers open spans): on only when an OTLP endpoint is configured.
  if (startTracing({ service: options.service })) logger.info('tracing on: spans exported by OTLP/HTTP');
  // Body parsing is ours, so a malformed body gets a clean refusal in the caller's protocol: JSON-RPC -32700
  // on the MCP routes, a problem document elsewhere — never the parser's text with the request's bytes.
  const app = await NestFactory.create(options.module, { logger: new NestPinoLogger(logger), bodyParser: false });
  if (options.browserGuard) app.use(browserGuard({ ...options.browserGuard, bindHost: options.host }, logger));
  app.use(traceRequests, timeRequests, refuseUnreadablePath, json({ limit: '256kb' }), urlencoded({ extended: false, limit: '100kb' }), refuseUnparsableBody, refuseUnsafeBody);
  const trusted = (options.trustedProxies ?? '').split(',').map((p) => p.trim()).filter(Boolean);
  app.getHttpAdapter().getInstance().set('trust proxy', trusted.length > 0 ? trusted : false);
  if (trusted.length === 0) app.use(warnOfUntrustedProxy(logger));
  options.mount?.(app);
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
  if (options.shutdownHooks !== false) app.enableShutdownHooks();
  if (options.openApi) {
    const doc = new DocumentBuilder().setTitle(options.openApi.title).setDescription(options.openApi.description).addBearerAuth().build();
    SwaggerModule.setup('docs', app, () => SwaggerModule.createDocument(app, doc));
  }
  boundSlowConnections(app.getHttpServer() as Server, options.requestHeadTimeoutMs ?? 10_000);
  await app.listen(options.port, options.host);
  // Port 0 asks for any free port: the URL names the one the server got.
  const address = (app.getHttpServer() as import('node:net').Server).address();
  const port = address && typeof address === 'object' ? address.port : options.port;
  const url = `http://${options.host.includes(':') ? `[${options.host}]` : options.host}:${port}`;
  logger.info({ url }, `${options.service} listening`);
  const close = app.close.bind(app);
  app.close = async () => {
    await close();
    await stopTracing(); // the last spans are exported
  };
  return { app, logger, url };
}

/** Each request in a server span whose parent is the caller's `traceparent` (tracing on only). */
function traceRequests(req: Request, res: Response, next: NextFunction): void {
  if (!tracingOn()) return next();
  const span = httpServerSpan(req.method, req.path, req.headers);
  res.once('finish', () => span.end(res.statusCode));
  span.run(next);
}

/** The error middleware after the body parsers: a body that cannot be read is refused in the caller's protocol. */
function refuseUnparsableBody(err: { type?: string; status?: number } | undefined, req: Request, res: Response, next: NextFunction): void {
  if (!err) return next();
  const status = err.status && err.status >= 400 && err.status < 500 ? err.status : 400;
  const tooLarge = err.type === 'entity.too.large';
  if (req.path.startsWith('/mcp/')) {
    res.status(status).json({ jsonrpc: '2.0', id: null, error: tooLarge ? { code: -32600, message: 'Request too large' } : { code: -32700, message: 'Parse error' } });
    return;
  }
  sendProblem(res, status, tooLarge ? 'Payload Too Large' : 'Bad Request', tooLarge ? 'The request body is too large.' : 'The request body is not valid JSON or form data.');
}

/** Closes a connection that has not delivered a complete request head in time; sets the server's own bounds. */
function boundSlowConnections(server: Server, headTimeoutMs: number): void {
  server.headersTimeout = Math.max(headTimeoutMs, 1000);
  server.requestTimeout = Math.max(30_000, headTimeoutMs);
  // Idle keep-alive connections stay open longer than clients and proxies keep them (undici: the server's hint less
  // 1 s; load balancers: ~60 s), so it is the client that closes an idle one: a server closing first races a request
  // the client is just sending on it, which the client sees as a reset (the fuzz e2e hit this once under CI load).
  server.keepAliveTimeout = 65_000;
  const pending = new WeakMap<Socket, NodeJS.Timeout>();
  server.on('connection', (socket: Socket) => {
    const timer = setTimeout(() => socket.destroy(), headTimeoutMs);
    timer.unref();
    pending.set(socket, timer);
    socket.once('close', () => clearTimeout(timer));
  });
  server.on('request', (req: { socket: Socket }) => clearTimeout(pending.get(req.socket)));
}

/** Every request's latency by method, route pattern (never the raw path: bounded labels) and status class. */
function timeRequests(req: Request, res: Response, next: NextFunction): void {
  const end = httpRequestSeconds.startTimer();
  res.once('finish', () => {
    const route = (req.route as { path?: string } | undefined)?.path;
    end({ method: req.method.slice(0, 8), route: route ? `${req.baseUrl}${route}` : 'unmatched', status: `${Math.floor(res.statusCode / 100)}xx` });
  });
  next();
}

/** How deep a request body may nest on the HTTP APIs (the MCP routes check tool arguments themselves, per field). */
export const MAX_BODY_DEPTH = 32;

/** A string PostgreSQL cannot store (NUL) or that is not text at all (a lone UTF-16 surrogate). */
// eslint-disable-next-line no-control-regex -- matching NUL is the point
const UNSTORABLE = /\u0000|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Why a parsed body cannot be accepted (too deep, or a key or string PostgreSQL cannot store), if it cannot. */
export function unsafeBody(value: unknown, limit = MAX_BODY_DEPTH): string | undefined {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v === 'string' && UNSTORABLE.test(v)) return 'The request body holds a NUL character or a lone surrogate.';
    if (v === null || typeof v !== 'object') continue;
    if (depth >= limit) return `The request body nests deeper than ${limit} levels.`;
    for (const [k, child] of Object.entries(v)) {
      if (UNSTORABLE.test(k)) return 'The request body holds a NUL character or a lone surrogate.';
      stack.push([child, depth + 1]);
    }
  }
  return undefined;
}

/** A body that cannot be stored or is nested past MAX_BODY_DEPTH never reaches validation or PostgreSQL (both were 500s). */
function refuseUnsafeBody(req: Request, res: Response, next: NextFunction): void {
  const problem = req.path.startsWith('/mcp/') ? undefined : unsafeBody(req.body);
  if (!problem) return next();
  sendProblem(res, 400, 'Bad Request', problem);
}

/** NUL, other control characters or a malformed %-escape in the path or query: refused before any route sees them. */
function refuseUnreadablePath(req: Request, res: Response, next: NextFunction): void {
  let decoded: string;
  try {
    decoded = decodeURIComponent(req.originalUrl);
  } catch {
    decoded = '\u0000';
  }
  // eslint-disable-next-line no-control-regex
  if (!/[\u0000-\u001f\u007f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(decoded)) return next();
  sendProblem(res, 400, 'Bad Request', 'The request path or query holds control characters or malformed escapes.');
}

/** An RFC 9457 problem document: the refusal shape of the HTTP APIs (never the request's bytes, never internal text). */
function sendProblem(res: Response, status: number, title: string, detail: string): void {
  res.status(status).type('application/problem+json').send(JSON.stringify({ type: 'about:blank', title, status, detail }));
}
