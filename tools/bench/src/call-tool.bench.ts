/**
 * call_tool benchmark: latency of a paid-path call through the whole
 * pipeline against a direct call to the same upstream (text-tools word_count),
 * with 1 and 32 concurrent agents, in distributed mode (every app its own
 * process, Kafka + PostgreSQL) and in embedded mode. Needs the local Kafka
 * (`npm run kafka:start && npm run kafka:topics`). Writes
 * tools/bench/results/call-tool.json. Run: `npx nx run bench:call-tool`.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { freePort, startDistributedSystem, startTsProcess, waitFor } from '@tollgate/testing';
import { measure, modeResults, type Stats } from './bench-stats';

const SEQUENTIAL = 300;
const CONCURRENT = 32;
const CONCURRENT_CALLS = 640;

async function client(url: string, credential?: string): Promise<Client> {
  const c = new Client({ name: 'bench', version: '1' });
  await c.connect(new StreamableHTTPClientTransport(new URL(url), credential ? { requestInit: { headers: { Authorization: `Bearer ${credential}` } } } : {}));
  return c;
}

async function post(url: string, body: unknown, token: string): Promise<Record<string, string>> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
  return (await res.json()) as Record<string, string>;
}

/** One direct client and 32 gateway agents; measures both at concurrency 1 and 32. */
async function run(gateway: string, adminToken: string, slug: string, upstream: string, upstreamToken: string): Promise<{ direct: Record<string, Stats>; gateway: Record<string, Stats> }> {
  const { ownerId } = await post(`${gateway}/admin/owners`, { name: 'bench' }, adminToken);
  const agents: Client[] = [];
  for (let i = 0; i < CONCURRENT; i++) {
    const { agentId } = await post(`${gateway}/admin/owners/${ownerId}/agents`, { name: `bench-${i}` }, adminToken);
    const { credential } = await post(`${gateway}/admin/agents/${agentId}/credentials`, {}, adminToken);
    agents.push(await client(`${gateway}/mcp/${slug}`, credential));
  }
  const directs = await Promise.all(Array.from({ length: CONCURRENT }, () => client(upstream, upstreamToken)));
  const viaGateway = async (c: Client, i: number) => {
    const r = (await c.callTool({ name: 'call_tool', arguments: { name: 'word_count', arguments: { text: `one two ${i}` } } })) as CallToolResult;
    if (r.isError) throw new Error(JSON.stringify(r._meta));
  };
  const direct = async (c: Client, i: number) => {
    const r = (await c.callTool({ name: 'word_count', arguments: { text: `one two ${i}` } })) as CallToolResult;
    if (r.isError) throw new Error('direct call failed');
  };
  await waitFor('word_count callable', async () => {
    try {
      await viaGateway(agents[0]!, 0);
      return true;
    } catch {
      return false;
    }
  }, 60_000, 500);
  for (let i = 0; i < 20; i++) await viaGateway(agents[0]!, i); // warm-up
  for (let i = 0; i < 20; i++) await direct(directs[0]!, i);
  const out = {
    direct: {
      one: await measure(SEQUENTIAL, 1, (i) => direct(directs[0]!, i)),
      thirtyTwo: await measure(CONCURRENT_CALLS, CONCURRENT, (i) => direct(directs[i % CONCURRENT]!, i)),
    },
    gateway: {
      one: await measure(SEQUENTIAL, 1, (i) => viaGateway(agents[0]!, i)),
      thirtyTwo: await measure(CONCURRENT_CALLS, CONCURRENT, (i) => viaGateway(agents[i % CONCURRENT]!, i)),
    },
  };
  await Promise.all([...agents, ...directs].map((c) => c.close()));
  return out;
}

async function distributed() {
  const system = await startDistributedSystem(['gateway', 'discovery', 'execution', 'payment', 'settlement', 'ledger', 'sample-providers'], { LOG_LEVEL: 'warn', SETTLEMENT_VERIFICATION_WINDOW_MS: '1000' });
  try {
    const gw = system.url('gateway');
    await post(`${gw}/admin/mcp-urls`, { slug: 'bench', discoveryMode: 'search' }, system.adminToken);
    const upstream = `${system.url('sample-providers')}/providers/text-tools/mcp`;
    await post(`${system.url('discovery')}/admin/providers`, { providerId: 'text-tools', endpoint: upstream }, system.adminToken);
    return await run(gw, system.adminToken, 'bench', upstream, system.providersToken);
  } finally {
    await system.stop();
  }
}

async function embedded() {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-bench-call-'));
  chmodSync(dataDir, 0o755);
  const [port, pgPort, upstreamPort] = [await freePort(), await freePort(), await freePort()];
  // The upstream in its own process, so the direct calls reach the very server the gateway calls.
  const token = 'bench-sample-providers-token';
  const upstreamHost = startTsProcess('sample-providers', 'apps/sample-providers/src/main.ts', [], { PORT: String(upstreamPort), LOG_LEVEL: 'warn', SAMPLE_PROVIDERS_TOKEN: token });
  const system = startTsProcess('embedded', 'apps/embedded/src/main.ts', [], {
    DEMO_MONEY: 'false', PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), DATA_DIR: dataDir, LOG_LEVEL: 'warn', UPSTREAM_CREDENTIALS: `http://127.0.0.1:${upstreamPort}=${token}`,
  });
  try {
    await system.waitForOutput(/Tollgate is running/, 120_000);
    const demo = JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as { adminToken: string };
    const base = `http://127.0.0.1:${port}`;
    const upstream = `http://127.0.0.1:${upstreamPort}/providers/text-tools/mcp`;
    await waitFor('upstream up', async () => (await fetch(upstream, { method: 'POST' }).catch(() => undefined))?.status !== undefined, 60_000, 250);
    return await run(base, demo.adminToken, 'demo', upstream, token);
  } finally {
    await system.stop();
    await upstreamHost.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function line(mode: string, r: { direct: Record<string, Stats>; gateway: Record<string, Stats> }): string {
  const f = (s: Stats) => `p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms, ${s.throughputPerS}/s`;
  return [
    `${mode}: direct 1 agent ${f(r.direct['one']!)}; 32 agents ${f(r.direct['thirtyTwo']!)}`,
    `${mode}: call_tool 1 agent ${f(r.gateway['one']!)}; 32 agents ${f(r.gateway['thirtyTwo']!)}`,
    `${mode}: overhead p50 (1 agent) ${(r.gateway['one']!.p50Ms - r.direct['one']!.p50Ms).toFixed(2)} ms`,
  ].join('\n');
}

async function main(): Promise<void> {
  // BENCH_MODES=embedded (or distributed) runs one mode only; the results file keeps the other mode's last figures.
  const results = modeResults('call-tool', ['distributed', 'embedded']);
  for (const [mode, fn] of [['distributed', distributed], ['embedded', embedded]] as const) {
    if (!results.wants(mode)) continue;
    const r = await fn();
    process.stdout.write(`${line(mode, r)}\n`);
    results.record(mode, { ...r, overheadP50Ms: +(r.gateway['one']!.p50Ms - r.direct['one']!.p50Ms).toFixed(3) });
  }
  process.stdout.write(`written to ${results.file}\n`);
}

main().then(() => process.exit(0), (e) => {
  process.stderr.write(`${String(e?.stack ?? e)}\n`);
  process.exit(1);
});
