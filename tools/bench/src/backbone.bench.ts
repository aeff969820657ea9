/**
 * Backbone benchmark (issue 11 point 5): paid call_tool calls through the gateway beside direct calls to the same
 * upstream (text-tools word_count, served by the sample providers in their own process), sequentially (1 agent) and
 * with 16 separate agents, plus PostgreSQL statements, commits and CPU per call (pg_stat_statements, pg_stat_database,
 * /proc) once the background work of those calls (settlement, ledger) is done, net of the idle rate.
 *
 *   npm run bench:backbone                    embedded, then distributed (needs the local Kafka: npm run kafka:start)
 *   BENCH_MODES=embedded npm run bench:backbone
 *   BENCH_SOAK_S=600 npm run bench:backbone   adds a steady-load soak: memory, open holds and p99 per 30 s window
 *   BENCH_ERA=2026-07-28 npm run bench:backbone   agents (and the direct clients) speak MCP 2026-07-28 (SDK v2 client,
 *                                                 pinned) instead of the 2025 era; results in backbone-2026-07-28.json
 *
 * Writes tools/bench/results/backbone.json.
 */
import { chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client as PgClient } from 'pg';
import { freePort, type RunningProcess, startDistributedSystem, startProcess, startTsProcess, waitFor, WORKSPACE_ROOT } from '@tollgate/testing';
import { measure, modeResults, type Stats } from './bench-stats';

const AGENTS = 16;
const PROVIDERS_TOKEN = 'bench-sample-providers-token';
const SEQUENTIAL = 300;
const CONCURRENT_CALLS = 960;
const PRICE_MINOR = '10';
const FREE_CALLS = 100;
/** The sequential rounds after a burst, right away and once caught up (growth or catch-up). */
const AFTER_BURST_CALLS = 100;
const CLOCK_TICKS_PER_S = 100;

/** The protocol era the bench's clients speak (BENCH_ERA=2026-07-28 for the current one). */
const MODERN_ERA = process.env['BENCH_ERA'] === '2026-07-28';

async function mcp(url: string, credential?: string): Promise<Client> {
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

async function send(method: string, url: string, body: unknown, token: string): Promise<Record<string, string>> {
  const res = await fetch(url, { method, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
  if (res.status >= 300) throw new Error(`${method} ${url}: ${res.status} ${await res.text()}`);
  return (await res.json()) as Record<string, string>;
}

/**
 * CPU seconds (user + system, children that exited included) of the embedded host and of its PostgreSQL: the
 * postmaster (it starts its own session, so it is found through its pid file) and its backends.
 */
function groupCpuSeconds(hostPid: number, postmasterPid: number): { node: number; postgres: number } {
  const out = { node: 0, postgres: 0 };
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const pid = Number(entry);
      const ppid = Number(fields[1]);
      // utime + stime, plus cutime + cstime for the postmaster (its exited backends)
      const own = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
      const reaped = (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS_PER_S;
      if (pid === hostPid) out.node += own;
      else if (pid === postmasterPid) out.postgres += own + reaped;
      else if (ppid === postmasterPid) out.postgres += own;
    } catch {
      // The process ended meanwhile.
    }
  }
  return out;
}

interface Counters { statements: number; commits: number; cpu: { node: number; postgres: number }; at: number }

/** What the measurements need from a running system, embedded or distributed. */
interface Target {
  urls: { gateway: string; discovery: string; payment: string };
  admin: string;
  upstream: string;
  /** The sample providers' token (the direct calls present it, as the platform does). */
  upstreamToken: string;
  pg: PgClient;
  /** pg_stat_statements is loaded (embedded: always; the distributed test server: only if configured). */
  statements: boolean;
  cpu(): { node: number; postgres: number };
  /** Resident memory of the service processes (MB). */
  rssMb(): number;
}

async function counters(t: Target): Promise<Counters> {
  const statements = t.statements ? Number((await t.pg.query<{ n: string }>('SELECT coalesce(sum(calls), 0)::text AS n FROM pg_stat_statements')).rows[0]!.n) : NaN;
  const [c] = (await t.pg.query<{ n: string }>("SELECT (xact_commit)::text AS n FROM pg_stat_database WHERE datname = current_database()")).rows;
  return { statements, commits: Number(c!.n), cpu: t.cpu(), at: Date.now() };
}

function rssOf(pids: number[]): number {
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

/** CPU seconds of some processes, and of every postgres process of the machine (the distributed test server). */
function processesCpuSeconds(pids: number[]): { node: number; postgres: number } {
  const out = { node: 0, postgres: 0 };
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const own = (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
      if (pids.includes(Number(entry))) out.node += own;
      else if (stat.includes('(postgres)')) out.postgres += own;
    } catch {
      // The process ended meanwhile.
    }
  }
  return out;
}

function perCall(before: Counters, after: Counters, idle: { statementsPerS: number; commitsPerS: number; cpuPerS: number }, calls: number) {
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

async function idleRate(t: Target) {
  const a = await counters(t);
  await new Promise((r) => setTimeout(r, 5000));
  const b = await counters(t);
  const s = (b.at - a.at) / 1000;
  return {
    statementsPerS: (b.statements - a.statements) / s, commitsPerS: (b.commits - a.commits) / s,
    cpuPerS: ((b.cpu.node - a.cpu.node) + (b.cpu.postgres - a.cpu.postgres)) / s,
  };
}

async function startEmbedded(dataDir: string) {
  const [port, pgPort, upstreamPort] = [await freePort(), await freePort(), await freePort()];
  const upstreamHost = startTsProcess('sample-providers', 'apps/sample-providers/src/main.ts', [], { PORT: String(upstreamPort), LOG_LEVEL: 'warn', SAMPLE_PROVIDERS_TOKEN: PROVIDERS_TOKEN });
  const profile = process.env['BENCH_CPU_PROFILE'];
  const env = {
    DEMO_MONEY: 'false', PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), DATA_DIR: dataDir, LOG_LEVEL: 'warn', SETTLEMENT_VERIFICATION_WINDOW_MS: '200',
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
  };
  return { target, system, upstreamHost };
}

async function prepareAgents(t: Target): Promise<{ agents: Client[]; free: Stats }> {
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
  // Free calls first (the tool is free until priced): the same life without money moving.
  for (let i = 0; i < 20; i++) await callGatewayFree(agents[0]!, i);
  const free = await measure(FREE_CALLS, 1, (i) => callGatewayFree(agents[1]!, i));
  await send('PATCH', `${discovery}/admin/tools/word_count`, { priceMinor: PRICE_MINOR, asset: 'USDC', freeCallsPerDay: 0 }, t.admin);
  return { agents, free };
}

async function callGatewayFree(c: Client, i: number): Promise<void> {
  const r = (await c.callTool({ name: 'call_tool', arguments: { name: 'word_count', arguments: { text: `free ${i}` } } })) as CallToolResult;
  if (r.isError) throw new Error(JSON.stringify(r._meta));
  const receipt = r._meta?.['assay/receipt'] as { held?: { amountMinor?: string }; charged?: { amountMinor?: string } } | undefined;
  if ((receipt?.held?.amountMinor ?? '0') !== '0' || (receipt?.charged?.amountMinor ?? '0') !== '0') throw new Error(`not a free call: ${JSON.stringify(r._meta)}`);
}

async function callGateway(c: Client, i: number): Promise<void> {
  const r = (await c.callTool({ name: 'call_tool', arguments: { name: 'word_count', arguments: { text: `one two ${i}` } } })) as CallToolResult;
  if (r.isError) throw new Error(JSON.stringify(r._meta));
  const receipt = r._meta?.['assay/receipt'] as { held?: { amountMinor?: string }; charged?: { amountMinor?: string } } | undefined;
  if (receipt?.held?.amountMinor !== PRICE_MINOR && receipt?.charged?.amountMinor !== PRICE_MINOR) throw new Error(`not a paid call: ${JSON.stringify(r._meta)}`);
}

async function callDirect(c: Client, i: number): Promise<void> {
  const r = (await c.callTool({ name: 'word_count', arguments: { text: `one two ${i}` } })) as CallToolResult;
  if (r.isError) throw new Error('direct call failed');
}

/** The books after the run: every hold of the run captured, nothing held, payment and ledger agree on the totals. */
async function booksAfter(pg: PgClient): Promise<Record<string, unknown>> {
  const q = async (sql: string) => (await pg.query(sql)).rows[0] as Record<string, string>;
  return waitFor('every hold resolved', async () => {
    const r = {
      ...(await q("SELECT count(*) AS holds, count(*) FILTER (WHERE status = 'pending') AS open FROM payment.hold")),
      ...(await q("SELECT coalesce(sum(balance), 0)::text AS held FROM payment.balance WHERE account LIKE 'owner:%:held'")),
      ...(await q('SELECT count(*) AS ledger_calls FROM (SELECT DISTINCT intent_id FROM ledger.timeline_entry) t')),
      ...(await q('SELECT coalesce(sum(amount), 0)::text AS journal_total FROM ledger.journal_entry')),
    };
    return r['open'] === '0' && r['held'] === '0' ? r : undefined;
  }, 120_000, 1000).catch(async () => ({ unresolved: true, ...(await q("SELECT count(*) FILTER (WHERE status = 'pending') AS open FROM payment.hold")) }));
}

async function soak(agents: Client[], t: Target, seconds: number) {
  const windows: Record<string, unknown>[] = [];
  const end = Date.now() + seconds * 1000;
  let i = 0;
  while (Date.now() < end) {
    const before = await counters(t);
    const s = await measure(8 * 30, 8, async (n) => {
      await callGateway(agents[n % agents.length]!, i++);
      await new Promise((r) => setTimeout(r, 100));
    });
    // Calls whose life is not finished (no settlement or refund yet): the event lag as a user sees it.
    const [open] = (await t.pg.query<{ n: string }>("SELECT count(*)::text AS n FROM payment.hold WHERE status = 'pending'")).rows;
    windows.push({ atS: Math.round((Date.now() - (end - seconds * 1000)) / 1000), p50Ms: s.p50Ms, p99Ms: s.p99Ms, throughputPerS: s.throughputPerS, rssMb: t.rssMb(), openHolds: Number(open!.n), cpuMsPerCall: perCall(before, await counters(t), { statementsPerS: 0, commitsPerS: 0, cpuPerS: 0 }, s.n).cpuMs });
    process.stdout.write(`soak ${JSON.stringify(windows.at(-1))}\n`);
  }
  return windows;
}

/** The measurements of issue 11 point 5 against one running system. */
async function measureTarget(t: Target): Promise<Record<string, unknown>> {
  const { agents, free } = await prepareAgents(t);
  const directs = await Promise.all(Array.from({ length: AGENTS }, () => mcp(t.upstream, t.upstreamToken)));
  // The new price reaches every service's catalog copy: wait for paid calls from every agent.
  await waitFor('paid word_count callable', async () => Promise.all(agents.map((a, i) => callGateway(a, i))).then(() => true, () => false), 90_000, 1000);
  for (let i = 0; i < 50; i++) await callGateway(agents[i % AGENTS]!, i); // warm-up
  for (let i = 0; i < 50; i++) await callDirect(directs[0]!, i);
  await new Promise((r) => setTimeout(r, 2000));
  const idle = await idleRate(t);

  const direct = { sequential: await measure(SEQUENTIAL, 1, (i) => callDirect(directs[0]!, i)), agents16: await measure(CONCURRENT_CALLS, AGENTS, (i) => callDirect(directs[i % AGENTS]!, i)) };
  let before = await counters(t);
  const sequentialFrom = new Date();
  const sequential = await measure(SEQUENTIAL, 1, (i) => callGateway(agents[0]!, i));
  const sequentialTo = new Date();
  await new Promise((r) => setTimeout(r, 3000)); // the verification window closes; settlement and ledger finish
  const sequentialCost = perCall(before, await counters(t), idle, SEQUENTIAL);
  if (t.statements) await t.pg.query('SELECT pg_stat_statements_reset()');
  before = await counters(t);
  const agents16 = await measure(CONCURRENT_CALLS, AGENTS, (i) => callGateway(agents[i % AGENTS]!, i));
  await new Promise((r) => setTimeout(r, 3000));
  const concurrentCost = perCall(before, await counters(t), idle, CONCURRENT_CALLS);
  // Where the statements of the 16-agent run went: the most frequent ones, per paid call.
  const topStatements = t.statements ? (await t.pg.query<{ calls: string; query: string }>(
    'SELECT calls::text, left(regexp_replace(query, \'\\s+\', \' \', \'g\'), 140) AS query FROM pg_stat_statements ORDER BY calls DESC LIMIT 120',
  )).rows.map((r) => ({ perCall: +(Number(r.calls) / CONCURRENT_CALLS).toFixed(2), query: r.query })) : [];
  const books = await booksAfter(t.pg);
  const afterBurst = await growthOrCatchUp(agents, t);
  // Where a sequential call's time goes: the median gap before each fact, from the previous fact of the same call.
  const hops = (await t.pg.query<{ type: string; p50: number }>(
    `SELECT type, round(percentile_cont(0.5) WITHIN GROUP (ORDER BY gap_ms)::numeric, 2)::float AS p50 FROM (
       SELECT type, occurred_at, extract(epoch FROM occurred_at - lag(occurred_at) OVER (PARTITION BY intent_id ORDER BY occurred_at)) * 1000 AS gap_ms
         FROM ledger.timeline_entry WHERE intent_id IN (SELECT intent_id FROM ledger.timeline_entry WHERE type = 'CallRequested' AND occurred_at BETWEEN $1 AND $2)) t
      WHERE gap_ms IS NOT NULL GROUP BY type ORDER BY min(occurred_at)`, [sequentialFrom, sequentialTo],
  )).rows.map((r) => ({ fact: r.type, medianGapMs: r.p50 }));
  const soakSeconds = Number(process.env['BENCH_SOAK_S'] ?? 0);
  const soakWindows = soakSeconds > 0 ? await soak(agents, t, soakSeconds) : undefined;
  await Promise.all([...agents, ...directs].map((c) => c.close()));
  return {
    direct, gateway: { sequential, agents16 }, freeCalls: { sequential: free }, idle,
    overheadP50Ms: +(sequential.p50Ms - direct.sequential.p50Ms).toFixed(2),
    costPerPaidCall: { sequential: sequentialCost, agents16: concurrentCost }, topStatements,
    books, hops, afterBurst, ...(soakWindows ? { soak: soakWindows } : {}),
  };
}

/**
 * Issue 19 point 5: the sequential p50 right after a 16-agent burst was ~2x the first round's — background catch-up
 * (settlement, ledger and the relay still working through the burst) or growth of the tables? A second burst, then a
 * sequential round at once, then another once every hold of the burst is resolved (the system caught up): if the
 * third matches the first round, the slowdown was catch-up; if it stays high, it is growth.
 */
async function growthOrCatchUp(agents: Client[], t: Target): Promise<Record<string, Stats>> {
  const round = (from: number) => measure(AFTER_BURST_CALLS, 1, (i) => callGateway(agents[0]!, from + i));
  await measure(CONCURRENT_CALLS / 2, AGENTS, (i) => callGateway(agents[i % AGENTS]!, 1_000_000 + i));
  const rightAfter = await round(2_000_000);
  await booksAfter(t.pg);
  const caughtUp = await round(3_000_000);
  return { rightAfter, caughtUp };
}

async function embedded(): Promise<Record<string, unknown>> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-bench-backbone-'));
  chmodSync(dataDir, 0o755);
  let system: RunningProcess | undefined;
  let upstreamHost: RunningProcess | undefined;
  try {
    const e = await startEmbedded(dataDir);
    system = e.system;
    upstreamHost = e.upstreamHost;
    const r = await measureTarget(e.target);
    await e.target.pg.end();
    return r;
  } finally {
    await system?.stop();
    await upstreamHost?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

/** Every app its own process, on the local Kafka and the PostgreSQL server of the machine. */
async function distributed(): Promise<Record<string, unknown>> {
  const names = ['gateway', 'discovery', 'execution', 'payment', 'settlement', 'ledger', 'sample-providers'] as const;
  const system = await startDistributedSystem(names, { LOG_LEVEL: 'warn', SETTLEMENT_VERIFICATION_WINDOW_MS: '200', OUTBOX_POLL_INTERVAL_MS: '1000' });
  const pg = new PgClient({ connectionString: system.db.url });
  pg.on('error', () => undefined);
  await pg.connect();
  try {
    const statements = await pg.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements').then(() => pg.query('SELECT 1 FROM pg_stat_statements LIMIT 1')).then(() => true, () => false);
    const services = system.processes.filter((p) => p.name !== 'sample-providers').map((p) => p.child.pid!);
    const target: Target = {
      urls: { gateway: system.url('gateway'), discovery: system.url('discovery'), payment: system.url('payment') },
      admin: system.adminToken, upstream: `${system.url('sample-providers')}/providers/text-tools/mcp`, upstreamToken: system.providersToken, pg, statements,
      cpu: () => processesCpuSeconds(services), rssMb: () => rssOf(services),
    };
    return await measureTarget(target);
  } finally {
    await pg.end().catch(() => undefined);
    await system.stop();
  }
}

function report(mode: string, r: Record<string, unknown>): string {
  const f = (s: Stats) => `p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms, ${s.throughputPerS} calls/s`;
  const d = r['direct'] as Record<string, Stats>;
  const g = r['gateway'] as Record<string, Stats>;
  const c = r['costPerPaidCall'] as Record<string, Record<string, number>>;
  return [
    `${mode} direct   sequential: ${f(d['sequential']!)} | 16 agents: ${f(d['agents16']!)}`,
    `${mode} gateway  sequential: ${f(g['sequential']!)} | 16 agents: ${f(g['agents16']!)}  (paid calls)`,
    `${mode} overhead p50 ${String(r['overheadP50Ms'])} ms; throughput gateway/direct (16 agents) ${(g['agents16']!.throughputPerS / d['agents16']!.throughputPerS).toFixed(3)}`,
    `${mode} per paid call (sequential): ${c['sequential']!['statements']} statements, ${c['sequential']!['commits']} commits, ${c['sequential']!['cpuMs']} ms CPU (node ${c['sequential']!['nodeCpuMs']}, postgres ${c['sequential']!['postgresCpuMs']})`,
    `${mode} per paid call (16 agents):  ${c['agents16']!['statements']} statements, ${c['agents16']!['commits']} commits, ${c['agents16']!['cpuMs']} ms CPU (node ${c['agents16']!['nodeCpuMs']}, postgres ${c['agents16']!['postgresCpuMs']})`,
    `${mode} books after the run: ${JSON.stringify(r['books'])}`,
    `${mode} free calls (sequential, through the gateway): p50 ${(r['freeCalls'] as { sequential: Stats }).sequential.p50Ms} ms, p99 ${(r['freeCalls'] as { sequential: Stats }).sequential.p99Ms} ms`,
    `${mode} sequential p50 first ${g['sequential']!.p50Ms} ms; right after a burst ${(r['afterBurst'] as Record<string, Stats>)['rightAfter']!.p50Ms} ms; once caught up ${(r['afterBurst'] as Record<string, Stats>)['caughtUp']!.p50Ms} ms`,
    `${mode} median gap before each fact (sequential): ${(r['hops'] as { fact: string; medianGapMs: number }[]).map((h) => `${h.fact} ${h.medianGapMs} ms`).join(', ')}`,
    `${mode} most frequent statements per paid call (16 agents):`,
    ...(r['topStatements'] as { perCall: number; query: string }[]).map((t) => `  ${t.perCall.toFixed(2).padStart(6)}  ${t.query}`),
  ].join('\n');
}

async function main(): Promise<void> {
  // BENCH_MODES=embedded (or distributed) runs one mode; the results file keeps the other mode's last figures.
  const results = modeResults(MODERN_ERA ? 'backbone-2026-07-28' : 'backbone', ['embedded', 'distributed']);
  for (const [mode, run] of [['embedded', embedded], ['distributed', distributed]] as const) {
    if (!results.wants(mode)) continue;
    const r = await run();
    process.stdout.write(`${report(mode, r)}\n`);
    results.record(mode, r);
  }
  process.stdout.write(`written to ${results.file}\n`);
}

main().then(() => process.exit(0), (e) => {
  process.stderr.write(`${String(e?.stack ?? e)}\n`);
  process.exit(1);
});
