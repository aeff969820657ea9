/**
 * search_tools benchmark: p50/p99 and throughput
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
import { CatalogIndex, FreeCallsService, gatewayDataSourceOptions, type GatewayOptions, SearchToolsUseCase, SemanticIndex } from '@tollgate/gateway-service';
import { HealthRegistry } from '@tollgate/observability';
import { openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase, freePort, startTsProcess, waitFor } from '@tollgate/testing';
import { stats } from './bench-stats';
import { generateCatalog, QUERIES } from './catalog-generator';

const TOOLS = 10_000;

/** The dense half on its own: embedding the catalog at sync (stored in a real PostgreSQL), and the index's memory. */
async function embedCatalog(options: GatewayOptions) {
  const db = await createTestDatabase('tollgate_bench_search');
  const ds = await openServiceDataSource(gatewayDataSourceOptions(db.url));
  const semantic = new SemanticIndex(ds, options, new HealthRegistry());
  await semantic.onModuleInit();
  if (semantic.state !== 'ready') throw new Error(`the model is not available: ${semantic.describe()}`);
  const catalog = generateCatalog(TOOLS);
  const heapBefore = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers;
  const t0 = performance.now();
  await semantic.sync(catalog as never);
  const embedMs = performance.now() - t0;
  const vectorBytes = process.memoryUsage().heapUsed + process.memoryUsage().arrayBuffers - heapBefore;
  const t1 = performance.now();
  const restarted = new SemanticIndex(ds, options, new HealthRegistry());
  await restarted.onModuleInit();
  await restarted.sync(catalog as never); // a restart: every vector comes from the table, none from the model
  const reloadMs = performance.now() - t1;
  return { semantic, catalog, figures: { embedAtSyncS: +(embedMs / 1000).toFixed(1), perToolMs: +(embedMs / TOOLS).toFixed(2), reloadAfterRestartMs: Math.round(reloadMs), heapGrowthMB: +(vectorBytes / 2 ** 20).toFixed(1),
    // Each tool: one 384-float vector in the map and its row in the packed matrix the search scans.
    vectorsMB: +((semantic.embeddedCount * 384 * 4 * 2) / 2 ** 20).toFixed(1) },
    close: async () => { await ds.destroy(); await db.drop(); } };
}

async function inGateway(ranking: 'lexical' | 'hybrid') {
  const options = { cursorSecret: 'bench', catalogPollMs: 60_000, searchRanking: ranking, searchModelDir: 'infra/models/.data/all-minilm-l6-v2-q' } as GatewayOptions;
  const dense = ranking === 'hybrid' ? await embedCatalog(options) : undefined;
  const index = new CatalogIndex(undefined as never, options, dense?.semantic);
  const t0 = performance.now();
  index.replaceAll(dense?.catalog ?? generateCatalog(TOOLS));
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
  await dense?.close();
  return { ranking, indexBuildMs: +indexMs.toFixed(1), ...(dense ? { dense: dense.figures } : {}), cold, warm };
}

async function endToEnd() {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-bench-'));
  chmodSync(dataDir, 0o755);
  const [port, pgPort] = [await freePort(), await freePort()];
  const system = startTsProcess('embedded', 'apps/embedded/src/main.ts', [], { DEMO_MONEY: 'false', PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
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
    // The gateway embeds the new tools in the background: measure once it has (the figure readiness reports).
    await waitFor('10,000 tools embedded', async () => {
      const ready = (await (await fetch(`${base}/health/ready`)).json()) as { figures: Record<string, number | null>; statuses: Record<string, string> };
      return (ready.figures['gateway.search.toolsEmbedded'] ?? 0) >= TOOLS || /^words only/.test(ready.statuses['gateway.search'] ?? '');
    }, 300_000, 1000);
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
  const insides = [await inGateway('hybrid'), await inGateway('lexical')];
  for (const inside of insides) {
    process.stdout.write(`search_tools inside the gateway, ${inside.ranking} (${TOOLS} tools, detail=summary), index built in ${inside.indexBuildMs} ms\n`);
    if (inside.dense) process.stdout.write(`  embedding ${TOOLS} tools at sync: ${inside.dense.embedAtSyncS} s (${inside.dense.perToolMs} ms/tool); after a restart ${inside.dense.reloadAfterRestartMs} ms from the table; vectors ${inside.dense.vectorsMB} MB (heap grew ${inside.dense.heapGrowthMB} MB)\n`);
    for (const [k, v] of Object.entries({ 'new query (cold)': inside.cold, 'repeated query / next page (warm)': inside.warm })) {
      process.stdout.write(`  ${k}: p50 ${v.p50Ms} ms, p99 ${v.p99Ms} ms, ${v.throughputPerS}/s\n`);
    }
  }
  const inside = { hybrid: insides[0], lexical: insides[1] };
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
