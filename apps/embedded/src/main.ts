/**
 * Embedded mode (the default, `npm start`): every service module in ONE
 * process on an embedded PostgreSQL engine, whose event log (PostgresLogTransport)
 * replaces Kafka, plus the sample providers and a demo agent. The services are
 * the very same modules the distributed apps run; only the transport and
 * database differ. The sample providers listen on a second, loopback-only port
 * behind a token. Nothing lives only in memory: `kill -9` at any moment loses
 * no event, and a restart on the same data dir carries on.
 */
import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { Module } from '@nestjs/common';
import { envValue, loadConfig } from '@tollgate/config';
import { displayAmount } from '@tollgate/contracts';
import { DiscoveryModule, RegisterProviderUseCase } from '@tollgate/discovery-service';
import { ExecutionModule, providerConcurrency } from '@tollgate/execution-service';
import { DeviceSignInUseCase, gatewayBrowserGuard, GatewayModule, ManageIdentitiesUseCase, mountOAuth, oauthOptions } from '@tollgate/gateway-service';
import { startNestApp } from '@tollgate/http';
import { LedgerModule } from '@tollgate/ledger-service';
import { EventTransportModule, PostgresLogTransport } from '@tollgate/messaging';
import { parseUpstreamCredentials } from '@tollgate/mcp-runtime';
import { createLogger, HealthModule } from '@tollgate/observability';
import { DEFAULT_VELOCITY, PaymentModule } from '@tollgate/payment-service';
import { ensureDatabase, startEmbeddedPostgres } from '@tollgate/persistence';
import { SampleProvidersModule, TEXT_TOOLS_PATH } from '@tollgate/sample-providers-service';
import { SettlementModule } from '@tollgate/settlement-service';
import { EmbeddedConfig } from './embedded.config';
import { launchedInOwnGroup } from './terminal-launcher';

interface DemoFile {
  mcpUrl: string;
  credential: string;
  ledgerUrl: string;
  adminToken: string;
  agentId: string;
  /** Approves devices on the sign-in page of the local bridge (tollgate-mcp). */
  ownerKey?: string;
  ownerId?: string;
  /** The bearer token of /metrics (generated at the first start unless METRICS_TOKEN is set or METRICS_OPEN=true). */
  metricsToken?: string;
  /** A finance-role token of the finance API and console (demo only). */
  financeToken?: string;
  /** An operator token (also sees operation keys and signed payments; demo only). */
  operatorToken?: string;
}

const logger = createLogger('embedded');

async function main(): Promise<void> {
  if (launchedInOwnGroup()) return;
  const config = loadConfig(EmbeddedConfig);
  const dataDir = path.resolve(config.DATA_DIR);
  mkdirSync(dataDir, { recursive: true });
  protectDataDir(dataDir);
  const demoPath = path.join(dataDir, 'demo.json');
  const previous: DemoFile | undefined = existsSync(demoPath) ? JSON.parse(readFileSync(demoPath, 'utf8')) : undefined;
  const adminToken = previous?.adminToken ?? randomBytes(24).toString('base64url');
  // /metrics needs a token: the configured one, else one generated once and kept in demo.json.
  const metricsToken = process.env['METRICS_OPEN'] === 'true' ? undefined : (envValue('METRICS_TOKEN') || previous?.metricsToken || randomBytes(24).toString('base64url'));
  if (metricsToken) {
    process.env['METRICS_TOKEN'] = metricsToken;
    delete process.env['METRICS_TOKEN_FILE']; // read above: the one value now in force
  }

  const pg = config.DATABASE_URL
    ? { url: config.DATABASE_URL, stop: async () => undefined }
    : await startEmbeddedPostgresLogged(dataDir, config.EMBEDDED_PG_PORT);
  await ensureDatabase(pg.url);

  // The sample providers serve on their own loopback port behind a token only this process knows.
  const providersToken = randomBytes(24).toString('base64url');
  const providers = await startNestApp({ service: 'sample-providers', host: '127.0.0.1', port: config.SAMPLE_PROVIDERS_PORT,
    module: SampleProvidersModule.register({ adminToken: providersToken, maxSessions: 64, sessionIdleMs: 300_000 }) });
  const upstreamCredentials = new Map([...parseUpstreamCredentials(config.UPSTREAM_CREDENTIALS), [new URL(providers.url).origin, providersToken]]);

  const base = { databaseUrl: pg.url, outboxPollIntervalMs: 1000 };
  @Module({
    imports: [
      EventTransportModule.forRoot(new PostgresLogTransport({ databaseUrl: pg.url, logger: logger.child({ component: 'event-log' }) })),
      HealthModule,
      GatewayModule.register({ ...base, adminToken, callWaitMs: 35_000, callDeadlineMs: config.GATEWAY_CALL_DEADLINE_MS, cursorSecret: `derived:${adminToken}`, catalogPollMs: 30_000, policyTimeoutMs: 2000, signInTtlMs: config.GATEWAY_SIGNIN_TTL_MS,
        oauth: oauthOptions(config, config.HOST), searchRanking: config.GATEWAY_SEARCH_RANKING, searchModelDir: config.GATEWAY_SEARCH_MODEL_DIR,
        policyRoot: path.join(dataDir, 'policies') }),
      DiscoveryModule.register({ ...base, adminToken, syncIntervalMs: 300_000, upstreamCredentials }),
      ExecutionModule.register({ ...base, reconcileIntervalMs: config.EXECUTION_RECONCILE_INTERVAL_MS, stallGraceMs: config.EXECUTION_STALL_GRACE_MS, adminToken, upstreamCredentials,
        providerConcurrency: providerConcurrency(config) }),
      PaymentModule.register({ ...base, adminToken, velocity: DEFAULT_VELOCITY, ...config.x402Options(), mpp: config.mppOptions(config.PAYMENT_X402_FACILITATOR_TIMEOUT_MS) }),
      SettlementModule.register({ ...base, verificationWindowMs: config.SETTLEMENT_VERIFICATION_WINDOW_MS, sweepIntervalMs: 250, feeBps: 1000, adminToken }),
      LedgerModule.register({ ...base, adminToken, lingerMs: config.LEDGER_LINGER_MS }),
    ],
  })
  class EmbeddedAppModule {}

  const { app, url } = await startNestApp({ service: 'embedded', module: EmbeddedAppModule, host: config.HOST, port: config.PORT, shutdownHooks: false, trustedProxies: config.GATEWAY_TRUSTED_PROXIES,
    requestHeadTimeoutMs: config.HTTP_REQUEST_HEAD_TIMEOUT_MS, browserGuard: gatewayBrowserGuard(config.GATEWAY_ALLOWED_HOSTS), mount: mountOAuth });

  let stopping = false;
  const dropAfterGrace = (server: import('node:http').Server) => setTimeout(() => server.closeAllConnections(), 3_000).unref();
  // In order: stop taking requests, finish in-flight events and stop the consumers (their positions saved), flush the
  // outboxes, close the transport and the database pools — and only then stop PostgreSQL.
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down: no new requests; finishing in-flight events, flushing outboxes');
    const server = app.getHttpServer() as import('node:http').Server;
    server.close();
    server.closeIdleConnections();
    // A long-lived response (an MCP client's event stream) would hold the close for as long as the client keeps it:
    // requests get a moment to answer (a waiting call_tool answers at once), then what is left is dropped — a client
    // retries under its operation key, charged once. The sample providers close the same way once execution drained.
    dropAfterGrace(server);
    try {
      await app.close();
      dropAfterGrace(providers.app.getHttpServer() as import('node:http').Server);
      await providers.app.close();
    } catch (err) {
      logger.error({ err }, 'shutdown of the services failed');
    }
    await pg.stop();
    logger.info('stopped');
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));

  // The sample provider is (re)registered at every start, so the catalog always reflects it.
  await app.get(RegisterProviderUseCase).execute({ providerId: 'text-tools', endpoint: `${providers.url}${TEXT_TOOLS_PATH}`, defaults: { category: 'text' } });
  // The demo's paid write: a tool that confirms its effect by reading it back (C9). Only with the demo money — a
  // deployment (or a test) that brings its own review-tickets provider keeps it.
  if (config.DEMO_MONEY) {
    await app.get(RegisterProviderUseCase).execute({ providerId: 'review-tickets', endpoint: `${providers.url}/providers/review-tickets/mcp`, defaults: { category: 'review' } });
    // The demo's metered tool: summarize_text, priced per 100 characters read (held at its maximum, charged by use).
    await app.get(RegisterProviderUseCase).execute({ providerId: 'summaries', endpoint: `${providers.url}/providers/summaries/mcp`, defaults: { category: 'text' } });
  }

  const identities = previous ?? (await seedDemo(app.get(ManageIdentitiesUseCase), app.get(DeviceSignInUseCase), url, adminToken));
  const demo = identities.financeToken || !config.DEMO_MONEY ? identities : { ...identities, ...(await seedDemoMoney(url, adminToken, identities.ownerId)) };
  writeSecretFile(demoPath, JSON.stringify({ ...demo, ...(metricsToken ? { metricsToken } : {}), databaseUrl: pg.url, mcpUrl: `${url}/mcp/demo`, searchMcpUrl: `${url}/mcp/demo-search`, ledgerUrl: `${url}/calls`, consoleUrl: `${url}/console` }, null, 2) + '\n');
  process.stdout.write(
    `\nTollgate is running (embedded mode).\n  MCP URL:        ${url}/mcp/demo  (every tool listed)\n  Search MCP URL: ${url}/mcp/demo-search  (search_tools / get_tool / call_tool)\n`
    + `  Credential:     ${demo.credential}\n`
    + (demo.financeToken ? `  Wallet:         ${usdc(DEMO_DEPOSIT_MINOR)}; reverse_text costs ${usdc(DEMO_PRICE_MINOR)}, create_review_ticket ${usdc(DEMO_WRITE_PRICE_MINOR)}, summarize_text 0.001 USDC per 100 characters read (0.10 held); the other tools are free\n` : '')
    + `  Console:        ${url}/console${demo.financeToken ? `  (finance token: ${demo.financeToken})` : ''}\n`
    + (demo.operatorToken ? `  Operator token: ${demo.operatorToken}  (console and tollgate-ops: also operation keys and signed payments)\n` : '')
    + `  Ledger:         ${url}/calls/<intentId>\n  Written to:     ${demoPath}\n\n`,
  );
}

/** A demo amount as a person reads it ("0.25 USDC"), from its minor units. */
const usdc = (minor: string) => displayAmount(BigInt(minor), 'USDC');

const DEMO_DEPOSIT_MINOR = '100000000'; // 100 USDC (6 decimals)
const DEMO_PRICE_MINOR = '250000'; // 0.25 USDC
const DEMO_WRITE_PRICE_MINOR = '1000000'; // 1 USDC

/**
 * The demo's money, through the same admin APIs an operator uses: a funded wallet, priced tools beside a free one, a
 * search-mode URL, a finance token and an operator token for the console. Run once per data folder (the deposit is idempotent by reference).
 */
async function seedDemoMoney(url: string, adminToken: string, ownerId: string | undefined): Promise<{ financeToken: string; operatorToken: string }> {
  const call = async (method: string, path: string, body: unknown) => {
    const res = await fetch(`${url}${path}`, { method, headers: { 'content-type': 'application/json', authorization: `Bearer ${adminToken}` }, body: JSON.stringify(body) });
    if (!res.ok && res.status !== 409) throw new Error(`demo seed: ${method} ${path} answered ${res.status}`);
    return (await res.json()) as Record<string, unknown>;
  };
  if (ownerId) await call('POST', `/admin/owners/${ownerId}/deposits`, { reference: 'demo-welcome', amount: { amountMinor: DEMO_DEPOSIT_MINOR, asset: 'USDC' } });
  await call('PATCH', '/admin/tools/reverse_text', { priceMinor: DEMO_PRICE_MINOR, asset: 'USDC' });
  await call('PATCH', '/admin/tools/create_review_ticket', { priceMinor: DEMO_WRITE_PRICE_MINOR, asset: 'USDC' });
  await call('POST', '/admin/mcp-urls', { slug: 'demo-search', discoveryMode: 'search' });
  // Finance staff get a finance-role token (no operation keys, no signed payments); ops a separate
  // operator token.
  const finance = await call('POST', '/admin/finance-tokens', { label: 'demo finance', role: 'finance' });
  const operator = await call('POST', '/admin/finance-tokens', { label: 'demo operator', role: 'operator' });
  return { financeToken: String(finance['token']), operatorToken: String(operator['token']) };
}

/**
 * data/ holds secrets (demo.json: the admin token, the owner key, finance tokens) and the database: nobody else may
 * list or read it. As root the embedded PostgreSQL runs as its own user, which must still reach its folder inside:
 * then others may traverse (0711) but not list.
 */
function protectDataDir(dataDir: string): void {
  chmodSync(dataDir, process.getuid?.() === 0 ? 0o711 : 0o700);
}

/** Written for its owner only (0600), also when it already existed with wider rights. */
function writeSecretFile(file: string, text: string): void {
  writeFileSync(file, text, { mode: 0o600 });
  chmodSync(file, 0o600);
}

function startEmbeddedPostgresLogged(dataDir: string, port: number) {
  return startEmbeddedPostgres(dataDir, port, (line) => void (line && logger.debug({ component: 'postgres' }, line)), { unixSocket: true });
}

async function seedDemo(identities: ManageIdentitiesUseCase, signIn: DeviceSignInUseCase, url: string, adminToken: string): Promise<DemoFile> {
  const { ownerId } = await identities.createOwner('Demo owner');
  const { agentId } = await identities.createAgent(ownerId, 'Demo agent');
  const { credential } = await identities.issueCredential(agentId);
  await identities.createMcpUrl('demo');
  const { ownerKey } = (await signIn.issueOwnerKey(ownerId))!;
  return { mcpUrl: `${url}/mcp/demo`, credential, ledgerUrl: `${url}/calls`, adminToken, agentId, ownerKey, ownerId };
}

main().catch((error) => {
  logger.fatal({ err: error }, 'failed to start');
  process.exit(1);
});
