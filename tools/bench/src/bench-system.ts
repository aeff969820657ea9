/**
 * The running system the backbone benchmarks measure (embedded or distributed), its agents and the counters read
 * around a round of calls: statements and commits (pg_stat_statements, pg_stat_database) and CPU (/proc).
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client as PgClient } from 'pg';
import { freePort, type RunningProcess, startProcess, startTsProcess, waitFor, WORKSPACE_ROOT } from '@tollgate/testing';

export const AGENTS = 16;
export const PROVIDERS_TOKEN = 'bench-sample-providers-token';
export const PRICE_MINOR = '10';
export const FREE_CALLS = 100;
export const CLOCK_TICKS_PER_S = 100;

/** The protocol era the bench's clients speak (BENCH_ERA=2026-07-28 for the current one). */
export const MODERN_ERA = process.env['BENCH_ERA'] === '2026-07-28';

export async function mcp(url: string, credential?: string): Promise<Client> {
  const init = credential ? { requestInit: { headers: { Authorization: `Bearer ${credential}` } } } : {};
  if (MODERN_ERA) {
    const modern = new ModernClient({ name: 'bench', version: '1' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await modern.connect(new ModernTransport(new URL(url), init));
    // Only callTool and close are used; their shapes agree across the two SDKs.
    return modern as unknown as Client;
  }
  const c = new Client({ name: 'bench', version: '1' });
  await c.connect(new StreamableHTTPClientTransport(new URL(url), init));
  return c;
}

export async function send(method: string, url: string, body: unknown, token: string): Promise<Record<string, string>> {
  const res = await fetch(url, { method, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, string>;
}

/** Each process of the machine as /proc/<pid>/stat shows it: its pid, parent, command, and CPU seconds (own, reaped children). */
function eachProcess(visit: (p: { pid: number; ppid: number; command: string; own: number; reaped: number }) => void): void {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      visit({
        pid: Number(entry), ppid: Number(fields[1]), command: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')),
        own: (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S, // utime + stime
        reaped: (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS_PER_S, // cutime + cstime
      });
    } catch {
      // The process ended meanwhile.
    }
  }
}

/**
 * CPU seconds (user + system) of the embedded host and of its PostgreSQL: the postmaster (it starts its own session,
 * so it is found through its pid file) with its exited backends, and its live backends.
 */
export function groupCpuSeconds(hostPid: number, postmasterPid: number): { node: number; postgres: number } {
  const out = { node: 0, postgres: 0 };
  eachProcess((p) => {
    if (p.pid === hostPid) out.node += p.own;
    else if (p.pid === postmasterPid) out.postgres += p.own + p.reaped;
    else if (p.ppid === postmasterPid) out.postgres += p.own;
  });
  return out;
}

export interface Counters { statements: number; commits: number; cpu: { node: number; postgres: number }; at: number }

/** What the measurements need from a running system, embedded or distributed. */
export interface Target {
  urls: { gateway: string; discovery: string; payment: string };
  admin: string;
  upstream: string;
  /** The sample providers' token (the direct calls present it, as the platform does). */
  upstreamToken: string;
  pg: PgClient;
  /** pg_stat_statements is loaded (embedded: always; the distributed test server: only if configured). */
  statements: boolean;
  cpu(): { node: number; postgres: number };
  /** CPU seconds of each service's process (distributed: one per service; embedded: the one host). */
  cpuByService(): Record<string, number>;
  /** Resident memory of the service processes (MB). */
  rssMb(): number;
  /** Every service's /metrics (one URL embedded, one per service distributed) and the token it needs. */
  metrics: { urls: string[]; token: string };
}

/** Sum and count of each (consumer, event type) series of the two per-stage histograms, over every service. */
export type StageCounters = Map<string, { ageSum: number; ageCount: number; handleSum: number; handleCount: number }>;

const STAGE_SERIES = /^tollgate_event_(age_seconds|handle_duration_seconds)_(sum|count)\{consumer="([^"]+)",type="([^"]+)"\} (\S+)$/;

/** Reads the per-stage histograms (`tollgate_event_age_seconds`, `tollgate_event_handle_duration_seconds`) of every service. */
export async function stageCounters(t: Target): Promise<StageCounters> {
  const out: StageCounters = new Map();
  for (const url of t.metrics.urls) {
    const text = await (await fetch(url, { headers: { authorization: `Bearer ${t.metrics.token}` } })).text();
    for (const line of text.split('\n')) {
      const m = STAGE_SERIES.exec(line);
      if (!m) continue;
      const key = `${m[3]} ← ${m[4]}`;
      const row = out.get(key) ?? { ageSum: 0, ageCount: 0, handleSum: 0, handleCount: 0 };
      const field = `${m[1] === 'age_seconds' ? 'age' : 'handle'}${m[2] === 'sum' ? 'Sum' : 'Count'}` as 'ageSum' | 'ageCount' | 'handleSum' | 'handleCount';
      row[field] += Number(m[5]);
      out.set(key, row);
    }
  }
  return out;
}

/**
 * Where each stage's time went between two readings: for each consumer and event type, the mean time from the event's
 * production to its handling (`waitMs`: commit, relay or log delivery, broker, batching) and of the handler (`handleMs`).
 */
export function stageMeans(before: StageCounters, after: StageCounters): { stage: string; events: number; waitMs: number; handleMs: number }[] {
  const rows = [];
  for (const [stage, a] of after) {
    const b = before.get(stage) ?? { ageSum: 0, ageCount: 0, handleSum: 0, handleCount: 0 };
    const events = a.ageCount - b.ageCount;
    if (events <= 0) continue;
    rows.push({
      stage, events, waitMs: +((1000 * (a.ageSum - b.ageSum)) / events).toFixed(2),
      handleMs: +((1000 * (a.handleSum - b.handleSum)) / Math.max(1, a.handleCount - b.handleCount)).toFixed(2),
    });
  }
  return rows.sort((x, y) => x.stage.localeCompare(y.stage));
}

export async function counters(t: Target): Promise<Counters> {
  const statements = t.statements ? Number((await t.pg.query<{ n: string }>('SELECT coalesce(sum(calls), 0)::text AS n FROM pg_stat_statements')).rows[0]!.n) : NaN;
  const [c] = (await t.pg.query<{ n: string }>("SELECT (xact_commit)::text AS n FROM pg_stat_database WHERE datname = current_database()")).rows;
  return { statements, commits: Number(c!.n), cpu: t.cpu(), at: Date.now() };
}

export function rssOf(pids: number[]): number {
  let kb = 0;
  for (const pid of pids) {
    try {
      kb += Number(readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+)/)?.[1] ?? 0);
    } catch {
      // gone
    }
  }
  return +(kb / 1024).toFixed(1);
}

/** CPU seconds of each named process (its own user + system time; 0 once gone). */
export function cpuSecondsOf(pids: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = Object.fromEntries(Object.keys(pids).map((name) => [name, 0]));
  const names = new Map(Object.entries(pids).map(([name, pid]) => [pid, name]));
  eachProcess((p) => {
    const name = names.get(p.pid);
    if (name) out[name] = p.own;
  });
  return out;
}

/** CPU seconds of some processes, and of every postgres process of the machine (the distributed test server). */
export function processesCpuSeconds(pids: number[]): { node: number; postgres: number } {
  const out = { node: 0, postgres: 0 };
  eachProcess((p) => {
    if (pids.includes(p.pid)) out.node += p.own;
    else if (p.command === 'postgres') out.postgres += p.own;
  });
  return out;
}

export function perCall(before: Counters, after: Counters, idle: { statementsPerS: number; commitsPerS: number; cpuPerS: number }, calls: number) {
  const seconds = (after.at - before.at) / 1000;
  const cpu = (after.cpu.node - before.cpu.node) + (after.cpu.postgres - before.cpu.postgres);
  return {
    statements: +(((after.statements - before.statements) - idle.statementsPerS * seconds) / calls).toFixed(1),
    commits: +(((after.commits - before.commits) - idle.commitsPerS * seconds) / calls).toFixed(1),
    cpuMs: +(((cpu - idle.cpuPerS * seconds) * 1000) / calls).toFixed(2),
    nodeCpuMs: +(((after.cpu.node - before.cpu.node) * 1000) / calls).toFixed(2),
    postgresCpuMs: +(((after.cpu.postgres - before.cpu.postgres) * 1000) / calls).toFixed(2),
  };
}

export async function idleRate(t: Target) {
  const a = await counters(t);
  await new Promise((r) => setTimeout(r, 5000));
  const b = await counters(t);
  const s = (b.at - a.at) / 1000;
  return {
    statementsPerS: (b.statements - a.statements) / s, commitsPerS: (b.commits - a.commits) / s,
    cpuPerS: ((b.cpu.node - a.cpu.node) + (b.cpu.postgres - a.cpu.postgres)) / s,
  };
}

export async function startEmbedded(dataDir: string) {
  const [port, pgPort, upstreamPort] = [await freePort(), await freePort(), await freePort()];
  const upstreamHost = startTsProcess('sample-providers', 'apps/sample-providers/src/main.ts', [], { PORT: String(upstreamPort), LOG_LEVEL: 'warn', SAMPLE_PROVIDERS_TOKEN: PROVIDERS_TOKEN });
  const profile = process.env['BENCH_CPU_PROFILE'];
  const metricsToken = 'bench-metrics-token-0123456789';
  const env = {
    METRICS_TOKEN: metricsToken, DEMO_MONEY: 'false', PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), DATA_DIR: dataDir, LOG_LEVEL: 'warn', SETTLEMENT_VERIFICATION_WINDOW_MS: '200',
    UPSTREAM_CREDENTIALS: `http://127.0.0.1:${upstreamPort}=${PROVIDERS_TOKEN}`,
  };
  // BENCH_CPU_PROFILE=<dir> writes a V8 CPU profile of the embedded host when it stops.
  const system = profile
    ? startProcess('embedded', process.execPath, [`--cpu-prof`, `--cpu-prof-dir=${profile}`, '-r', '@swc-node/register', path.resolve(WORKSPACE_ROOT, 'apps/embedded/src/main.ts')], env, { ownGroup: true })
    : startTsProcess('embedded', 'apps/embedded/src/main.ts', [], env, { ownGroup: true });
  await system.waitForOutput(/Tollgate is running/, 150_000);
  const demo = JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as { adminToken: string };
  const upstream = `http://127.0.0.1:${upstreamPort}/providers/text-tools/mcp`;
  await waitFor('upstream up', async () => (await fetch(upstream, { method: 'POST' }).catch(() => undefined))?.status !== undefined, 60_000, 250);
  const pg = new PgClient({ connectionString: `postgres://postgres:postgres@127.0.0.1:${pgPort}/tollgate` });
  pg.on('error', () => undefined); // the server stops at the end of the run
  await pg.connect();
  await pg.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const base = `http://127.0.0.1:${port}`;
  const postmasterPid = Number(readFileSync(path.join(dataDir, 'pg', 'postmaster.pid'), 'utf8').split('\n')[0]);
  const target: Target = {
    urls: { gateway: base, discovery: base, payment: base }, admin: demo.adminToken, upstream, upstreamToken: PROVIDERS_TOKEN, pg, statements: true,
    cpu: () => groupCpuSeconds(system.child.pid!, postmasterPid), rssMb: () => rssOf([system.child.pid!]),
    cpuByService: () => cpuSecondsOf({ embedded: system.child.pid! }),
    metrics: { urls: [`${base}/metrics`], token: metricsToken },
  };
  return { target, system, upstreamHost };
}

export async function prepareAgents(t: Target): Promise<{ agents: Client[] }> {
  const { gateway, discovery, payment } = t.urls;
  await send('POST', `${gateway}/admin/mcp-urls`, { slug: 'bench', discoveryMode: 'search' }, t.admin);
  await send('POST', `${discovery}/admin/providers`, { providerId: 'bench-text', endpoint: t.upstream }, t.admin);
  const agents: Client[] = [];
  for (let i = 0; i < AGENTS; i++) {
    // Separate owners and agents: spend and velocity rules are per agent, as they would be for real tenants.
    const { ownerId } = await send('POST', `${gateway}/admin/owners`, { name: `bench-${i}` }, t.admin);
    await send('POST', `${payment}/admin/owners/${ownerId}/deposits`, { reference: `bench-${ownerId}`, amount: { amountMinor: '100000000', asset: 'USDC' } }, t.admin);
    const { agentId } = await send('POST', `${gateway}/admin/owners/${ownerId}/agents`, { name: `bench-${i}` }, t.admin);
    const { credential } = await send('POST', `${gateway}/admin/agents/${agentId}/credentials`, {}, t.admin);
    agents.push(await mcp(`${gateway}/mcp/bench`, credential));
  }
  // Price the tool once its first sync reached the gateway (a later sync must not find an older listing to restore).
  await waitFor('word_count in the catalog', async () => !((await agents[0]!.callTool({ name: 'get_tool', arguments: { name: 'word_count' } })) as CallToolResult).isError, 90_000, 500);
  // Free calls first (the tool is free until priced): the same life without money moving. They are measured later, on
  // another free tool, once the system is as warm as for the paid rounds (here it still embeds the new catalog).
  for (let i = 0; i < 20; i++) await callGatewayFree(agents[0]!, i);
  await send('PATCH', `${discovery}/admin/tools/word_count`, { priceMinor: PRICE_MINOR, asset: 'USDC', freeCallsPerDay: 0 }, t.admin);
  return { agents };
}

export async function callGatewayFree(c: Client, i: number, tool = 'word_count'): Promise<void> {
  const r = (await c.callTool({ name: 'call_tool', arguments: { name: tool, arguments: { text: `free ${i}` } } })) as CallToolResult;
  if (r.isError) throw new Error(JSON.stringify(r._meta));
  const receipt = r._meta?.['assay/receipt'] as { held?: { amountMinor?: string }; charged?: { amountMinor?: string } } | undefined;
  if ((receipt?.held?.amountMinor ?? '0') !== '0' || (receipt?.charged?.amountMinor ?? '0') !== '0') throw new Error(`not a free call: ${JSON.stringify(r._meta)}`);
}

export async function callGateway(c: Client, i: number): Promise<void> {
  const r = (await c.callTool({ name: 'call_tool', arguments: { name: 'word_count', arguments: { text: `one two ${i}` } } })) as CallToolResult;
  if (r.isError) throw new Error(JSON.stringify(r._meta));
  const receipt = r._meta?.['assay/receipt'] as { held?: { amountMinor?: string }; charged?: { amountMinor?: string } } | undefined;
  if (receipt?.held?.amountMinor !== PRICE_MINOR && receipt?.charged?.amountMinor !== PRICE_MINOR) throw new Error(`not a paid call: ${JSON.stringify(r._meta)}`);
}

export async function callDirect(c: Client, i: number): Promise<void> {
  const r = (await c.callTool({ name: 'word_count', arguments: { text: `one two ${i}` } })) as CallToolResult;
  if (r.isError) throw new Error('direct call failed');
}

/** The books after the run: every hold of the run captured, nothing held, payment and ledger agree on the totals. */
export async function booksAfter(pg: PgClient): Promise<Record<string, unknown>> {
  const q = async (sql: string) => (await pg.query(sql)).rows[0] as Record<string, string>;
  return waitFor('every hold resolved', async () => {
    const r = {
      ...(await q("SELECT count(*) AS holds, count(*) FILTER (WHERE open) AS open FROM payment.hold")),
      ...(await q("SELECT coalesce(sum(balance), 0)::text AS held FROM payment.balance WHERE account LIKE 'owner:%:held'")),
      ...(await q('SELECT count(*) AS ledger_calls FROM (SELECT DISTINCT intent_id FROM ledger.timeline_entry) t')),
      ...(await q('SELECT coalesce(sum(amount), 0)::text AS journal_total FROM ledger.journal_entry')),
    };
    return r['open'] === '0' && r['held'] === '0' ? r : undefined;
  }, 120_000, 1000).catch(async () => ({ unresolved: true, ...(await q("SELECT count(*) FILTER (WHERE open) AS open FROM payment.hold")) }));
}


/** Starts the embedded system (and the sample providers) in a fresh data folder, runs `measure` on it, stops it all. */
export async function onEmbedded<R>(name: string, measureOn: (t: Target) => Promise<R>): Promise<R> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `tollgate-bench-${name}-`));
  chmodSync(dataDir, 0o755);
  let system: RunningProcess | undefined;
  let upstreamHost: RunningProcess | undefined;
  try {
    const e = await startEmbedded(dataDir);
    system = e.system;
    upstreamHost = e.upstreamHost;
    const r = await measureOn(e.target);
    await e.target.pg.end();
    return r;
  } finally {
    await system?.stop();
    await upstreamHost?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}
