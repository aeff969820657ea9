import { randomBytes } from 'node:crypto';
import { TopicSpecs } from '@tollgate/contracts';
import { createTestDatabase, ensureTopics } from './infra';
import { freePort, type RunningProcess, startTsProcess } from './processes';
import { waitFor } from './wait-for';

export type AppName = 'gateway' | 'discovery' | 'execution' | 'payment' | 'settlement' | 'ledger' | 'sample-providers';

export interface DistributedSystem {
  adminToken: string;
  /** Every service's METRICS_TOKEN (a scrape of /metrics needs it). */
  metricsToken: string;
  /** The sample providers' token (SAMPLE_PROVIDERS_TOKEN), for their test knobs; discovery and execution present it upstream. */
  providersToken: string;
  db: { url: string; drop(): Promise<void> };
  ports: Record<string, number>;
  processes: RunningProcess[];
  env(name: string): Record<string, string>;
  /** Starts (or restarts) one app as its own process with the system's settings. */
  start(name: string, app?: AppName): RunningProcess;
  url(name: string): string;
  /** The last warnings and errors each app logged (its latest process), for a test's failure message. */
  problems(perApp?: number): string;
  stop(): Promise<void>;
}

/**
 * Apps of the distributed mode, each its own process, on the real Kafka broker
 * (a fresh topic namespace per suite) and a fresh PostgreSQL database. Names
 * may repeat an app (`gateway-b` runs `apps/gateway`).
 */
export interface DistributedOptions {
  nodeArgs?: string[];
  /** Starts one app's process (default: its TypeScript entry point); the production-bundle test runs the built one. */
  launch?: (name: string, app: AppName, env: Record<string, string>) => RunningProcess;
}

export async function startDistributedSystem(
  names: readonly string[], settings: Record<string, string> = {}, appOf: (name: string) => AppName = (n) => n as AppName, options: DistributedOptions = {},
): Promise<DistributedSystem> {
  const adminToken = randomBytes(18).toString('base64url');
  const metricsToken = randomBytes(18).toString('base64url');
  const db = await createTestDatabase('tollgate_e2e');
  const prefix = `e2e-${Date.now().toString(36)}-${randomBytes(2).toString('hex')}.`;
  await ensureTopics(TopicSpecs.map((t) => prefix + t.name));
  const ports: Record<string, number> = {};
  for (const n of names) ports[n] = await freePort();
  const providersToken = randomBytes(18).toString('base64url');
  const upstreamCredentials = names.filter((n) => appOf(n) === 'sample-providers').map((n) => `http://127.0.0.1:${ports[n]}=${providersToken}`).join(',');
  const processes: RunningProcess[] = [];
  const env = (n: string) => ({
    PORT: String(ports[n]), DATABASE_URL: db.url, KAFKA_TOPIC_PREFIX: prefix, OUTBOX_POLL_INTERVAL_MS: '1000',
    METRICS_TOKEN: metricsToken, GATEWAY_ADMIN_TOKEN: adminToken, DISCOVERY_ADMIN_TOKEN: adminToken, EXECUTION_ADMIN_TOKEN: adminToken, PAYMENT_ADMIN_TOKEN: adminToken, SETTLEMENT_ADMIN_TOKEN: adminToken, LEDGER_ADMIN_TOKEN: adminToken, DISCOVERY_SYNC_INTERVAL_MS: '0',
    SETTLEMENT_VERIFICATION_WINDOW_MS: '200', SAMPLE_PROVIDERS_TOKEN: providersToken, UPSTREAM_CREDENTIALS: upstreamCredentials, ...settings,
  });
  const start = (n: string, app: AppName = appOf(n)) => {
    const p = options.launch?.(n, app, env(n)) ?? startTsProcess(n, `apps/${app}/src/main.ts`, [], env(n), { nodeArgs: options.nodeArgs ?? [] });
    processes.push(p);
    return p;
  };
  for (const n of names) start(n);
  await Promise.all(names.map((n) =>
    waitFor(`${n} up`, async () => (await fetch(`http://127.0.0.1:${ports[n]}/health/${appOf(n) === 'sample-providers' ? 'live' : 'ready'}`)).status < 500, 150_000, 250)
      .catch((e) => { throw new Error(`${String(e)}\n${processes.find((x) => x.name === n)?.output().slice(-3000)}`); })));
  return {
    adminToken, metricsToken, providersToken, db, ports, processes, env, start,
    url: (n) => `http://127.0.0.1:${ports[n]}`,
    problems: (perApp = 8) => names.map((n) => {
      const lines = ([...processes].reverse().find((p) => p.name === n)?.output() ?? '').split('\n').filter((l) => /"level":(40|50|60\b|"warn"|"error"|"fatal")/.test(l));
      return `${n}: ${lines.length === 0 ? 'no warnings or errors' : lines.slice(-perApp).map((l) => l.slice(0, 400)).join('\n  ')}`;
    }).join('\n'),
    async stop() {
      await Promise.all(processes.map((p) => p.stop()));
      await db.drop();
    },
  };
}
