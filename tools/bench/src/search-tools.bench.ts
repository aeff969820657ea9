/**
 * search_tools benchmark (issue 3): p50/p99 and throughput
 *   1. inside the gateway: the search use case (ranking, paging, byte cap) on a generated 10,000-tool catalog;
 *   2. end to end: an MCP SDK client over Streamable HTTP against the embedded system holding the same catalog.
 * Writes tools/bench/results/search-tools.json. Run: `npx nx run bench:search-tools` (about a minute).
 */
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Client as PgClient } from 'pg';
import { CatalogIndex, FreeCallsService, type GatewayOptions, SearchToolsUseCase } from '@tollgate/gateway-service';
import { freePort, startTsProcess, waitFor } from '@tollgate/testing';
import { stats } from './bench-stats';
import { generateCatalog, QUERIES } from './catalog-generator';

const TOOLS = 10_000;

async function inGateway() {
  const options = { cursorSecret: 'bench', catalogPollMs: 60_000 } as GatewayOptions;
  const index = new CatalogIndex(undefined as never, options);
  const t0 = performance.now();
  index.replaceAll(generateCatalog(TOOLS));
  const indexMs = performance.now() - t0;
  // No tool of the generated catalog has a free quota, so the free-call lookup never reaches a database here.
  const search = new SearchToolsUseCase(index, new FreeCallsService(undefined as never), undefined as never, options);
  const caller = { ownerId: 'o', agentId: 'a', credentialId: 'c', mcpUrlId: 'u', slug: 's' };
  const profile = { mcpUrlId: 'u', slug: 's', ownerId: null, mode: 'search' as const, autoThreshold: 20, pinned: [], scopeTools: null, scopeCategories: null, providerRules: null };
  // Cold: every query is new to the ranking cache (a unique extra word that matches nothing, so the work is the same).
  // Warm: the same queries again, as cursor pages and repeated searches are.
  const run = async (i: number, cold: boolean) => {
    const query = QUERIES[i % QUERIES.length]! + (cold ? ` zz${i}` : '');
    const start = performance.now();
    await search.page(caller, profile, { query, category: null, detail: 'summary', limit: 5, offset: 0, page: 1, firstPageAt: Date.now(), credentialId: 'c', mcpUrlId: 'u' });
    return performance.now() - start;
  };
  for (let i = 0; i < 300; i++) await run(i, true); // JIT warm-up
  const measure = async (cold: boolean) => {
    const samples: number[] = [];
    const wall = performance.now();
    for (let i = 0; i < 5000; i++) samples.push(await run(1000 + i, cold));
    return stats(samples, performance.now() - wall);
  };
  const cold = await measure(true);
  const warm = await measure(false);
  return { indexBuildMs: +indexMs.toFixed(1), cold, warm };
}

async function endToEnd() {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-bench-'));
  chmodSync(dataDir, 0o755);
  const [port, pgPort] = [await freePort(), await freePort()];
  const system = startTsProcess('embedded', 'apps/embedded/src/main.ts', [], { PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
  try {
    await system.waitForOutput(/Tollgate is running/, 120_000);
    const demo = JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as { mcpUrl: string; adminToken: string; credential: string };
    const base = `http://127.0.0.1:${port}`;
    // The read model is filled directly (as the catalog consumer would), then every instance is told to reload.
    const pg = new PgClient({ connectionString: `postgres://postgres:postgres@127.0.0.1:${pgPort}/tollgate` });
    await pg.connect();
    for (const chunk of chunks(generateCatalog(TOOLS), 500)) {
      await pg.query(
        `INSERT INTO gateway.catalog_tool (tool_id, name, status, version, doc) SELECT d->>'toolId', d->>'name', 'active', 1, d FROM jsonb_array_elements($1::jsonb) d ON CONFLICT DO NOTHING`,
        [JSON.stringify(chunk)],
      );
    }
    await pg.query(`SELECT pg_notify('gateway_catalog_changed', 'bench')`);
    await pg.end();
    // 30 searches per agent per minute: the benchmark spreads its requests over enough agents to stay under the limit.
    const post = async (p: string, body: unknown) =>
      (await (await fetch(`${base}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${demo.adminToken}` }, body: JSON.stringify(body) })).json()) as Record<string, string>;
    const { ownerId } = await post('/admin/owners', { name: 'bench' });
    const clients: Client[] = [];
    for (let i = 0; i < 30; i++) {
      const { agentId } = await post(`/admin/owners/${ownerId}/agents`, { name: `bench-${i}` });
      const { credential } = await post(`/admin/agents/${agentId}/credentials`, {});
      const c = new Client({ name: 'bench', version: '1' });
      await c.connect(new StreamableHTTPClientTransport(new URL(demo.mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${credential}` } } }));
      clients.push(c);
    }
    await waitFor('10,000 tools searchable', async () => {
      const r = await clients[0]!.callTool({ name: 'search_tools', arguments: { query: '', detail: 'names', limit: 1 } });
      return ((r.structuredContent as { total?: number })?.total ?? 0) >= TOOLS;
    }, 60_000, 500);
    const one = async (i: number) => {
      const start = performance.now();
      const r = await clients[i % clients.length]!.callTool({ name: 'search_tools', arguments: { query: QUERIES[i % QUERIES.length]!, detail: 'summary' } });
      if (r.isError) throw new Error(JSON.stringify(r._meta));
      return performance.now() - start;
    };
    const sequential: number[] = [];
    let wall = performance.now();
    for (let i = 1; i < 400; i++) sequential.push(await one(i));
    const seq = stats(sequential, performance.now() - wall);
    const concurrent: number[] = [];
    wall = performance.now();
    let next = 400;
    await Promise.all(Array.from({ length: 8 }, async () => {
      while (next < 800) concurrent.push(await one(next++));
    }));
    const conc = stats(concurrent, performance.now() - wall);
    await Promise.all(clients.map((c) => c.close()));
    return { sequential: seq, concurrency8: conc };
  } finally {
    await system.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

function* chunks<T>(a: T[], size: number): Generator<T[]> {
  for (let i = 0; i < a.length; i += size) yield a.slice(i, i + size);
}

async function main(): Promise<void> {
  const inside = await inGateway();
  process.stdout.write(`search_tools inside the gateway (${TOOLS} tools, detail=summary), index built in ${inside.indexBuildMs} ms\n`);
  for (const [k, v] of Object.entries({ 'new query (cold)': inside.cold, 'repeated query / next page (warm)': inside.warm })) {
    process.stdout.write(`  ${k}: p50 ${v.p50Ms} ms, p99 ${v.p99Ms} ms, ${v.throughputPerS}/s\n`);
  }
  if (process.env["BENCH_INSIDE_ONLY"]) return;
  const e2e = await endToEnd();
  process.stdout.write(`search_tools end to end (Streamable HTTP, embedded): sequential p50 ${e2e.sequential.p50Ms} ms, p99 ${e2e.sequential.p99Ms} ms, ${e2e.sequential.throughputPerS}/s; 8 concurrent p50 ${e2e.concurrency8.p50Ms} ms, p99 ${e2e.concurrency8.p99Ms} ms, ${e2e.concurrency8.throughputPerS}/s\n`);
  const out = path.resolve(__dirname, '../results');
  mkdirSync(out, { recursive: true });
  const file = path.join(out, 'search-tools.json');
  writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), machine: { cpus: os.cpus().length, node: process.version }, tools: TOOLS, inGateway: inside, endToEnd: e2e }, null, 2) + '\n');
  process.stdout.write(`written to ${file}\n`);
}

main().then(() => process.exit(0), (e) => {
  process.stderr.write(`${String(e?.stack ?? e)}\n`);
  process.exit(1);
});
