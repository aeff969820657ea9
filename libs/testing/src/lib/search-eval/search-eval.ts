import { chmodSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { freePort, type RunningProcess, startTsProcess } from '../processes';
import { waitFor } from '../wait-for';
import { EVAL_CATALOG } from './eval-catalog.data';
import { startEvalCatalogServer } from './eval-catalog.server';
import { EVAL_QUERIES, HELD_OUT_QUERIES } from './search-eval.queries';

export type Ranking = 'lexical' | 'dense' | 'hybrid';

/** A split's figures: how often the expected tool came first, in the top 3, and the mean reciprocal rank. */
export interface SplitScore {
  queries: number;
  top1: number;
  top3: number;
  mrr: number;
  misses: { query: string; expected: string; got: string[] }[];
}

export interface EvalScore {
  ranking: Ranking;
  /** The held-out split the weights were never tuned on; the top-level figures are the development split's. */
  heldOut: SplitScore;
  queries: number;
  top1: number;
  top3: number;
  mrr: number;
  /** Tools whose exact name, as a query, did not rank them first. */
  exactNameMisses: string[];
  misses: { query: string; expected: string; got: string[] }[];
  readiness: Record<string, unknown>;
}

/**
 * The search evaluation, through search_tools over MCP: the embedded system with the evaluation catalog
 * (a real MCP server listing 120 tools, names and descriptions only), one ranking per boot. `dataDir` may
 * be shared between boots: stored embeddings are reused, as after any restart.
 */
export async function evaluateSearch(ranking: Ranking, dataDir: string, env: Record<string, string> = {}): Promise<EvalScore> {
  const [port, pgPort] = [await freePort(), await freePort()];
  const provider = await startEvalCatalogServer();
  let system: RunningProcess | undefined;
  const clients: Client[] = [];
  try {
    system = startTsProcess('embedded', 'apps/embedded/src/main.ts', [], { DEMO_MONEY: 'false',
      PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), DATA_DIR: dataDir, LOG_LEVEL: 'warn', GATEWAY_SEARCH_RANKING: ranking, ...env,
    });
    await system.waitForOutput(/Tollgate is running/, 150_000);
    const base = `http://127.0.0.1:${port}`;
    const admin = (JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as { adminToken: string }).adminToken;
    const post = async (p: string, body: unknown) => (await (await fetch(`${base}${p}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` }, body: JSON.stringify(body) })).json()) as Record<string, string>;
    await post('/admin/providers', { providerId: 'eval-catalog', endpoint: provider.url });
    await post('/admin/mcp-urls', { slug: 'eval', discoveryMode: 'search' });
    const ownerId = (await post('/admin/owners', { name: 'eval' })).ownerId!;
    for (let i = 0; i < 12; i++) {
      const agentId = (await post(`/admin/owners/${ownerId}/agents`, { name: `eval-${i}` })).agentId!;
      const credential = (await post(`/admin/agents/${agentId}/credentials`, {})).credential!;
      const c = new Client({ name: 'eval', version: '1' });
      await c.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp/eval`), { requestInit: { headers: { Authorization: `Bearer ${credential}` } } }));
      clients.push(c);
    }
    const readiness = async () => (await (await fetch(`${base}/health/ready`)).json()) as { figures: Record<string, number>; statuses: Record<string, string> };
    // Registering again (a restart on the same data) re-syncs the provider at its new address: the catalog events that
    // follow must all be applied (and the index reloaded) before scoring, or a reload mid-evaluation changes a rank.
    const settled = async () => {
      const r = await readiness();
      const embedded = ranking === 'lexical' || /^words only/.test(r.statuses['gateway.search'] ?? '') || (r.figures['gateway.search.toolsEmbedded'] ?? 0) >= 120;
      return embedded && (r.figures['gateway.consumerLag.tollgate.gateway.catalog'] ?? 0) === 0;
    };
    await waitFor('the catalog listed, applied and embedded', async () => (await settled()) && (await new Promise((r) => setTimeout(r, 1000))) === undefined && settled(), 300_000, 500);
    let n = 0;
    const search = async (query: string) => {
      const r = (await clients[n++ % clients.length]!.callTool({ name: 'search_tools', arguments: { query, detail: 'names', limit: 10 } })) as CallToolResult;
      return ((r.structuredContent as { results?: { name: string }[] } | undefined)?.results ?? []).map((x) => x.name);
    };
    await waitFor('all 120 evaluation tools searchable', async () => (await search('get_forecast')).length > 0 && (await search('lookup_ip_address')).length > 0, 60_000, 500);
    return { ranking, ...(await score(search)), readiness: await readiness() };
  } finally {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await system?.stop();
    await provider.close();
  }
}

async function split(search: (q: string) => Promise<string[]>, queries: readonly { query: string; expected: string }[]): Promise<SplitScore> {
  let top1 = 0;
  let top3 = 0;
  let rr = 0;
  const misses: SplitScore['misses'] = [];
  for (const { query, expected } of queries) {
    const got = await search(query);
    const at = got.indexOf(expected);
    if (at === 0) top1++;
    if (at >= 0 && at < 3) top3++;
    else misses.push({ query, expected, got: got.slice(0, 3) });
    if (at >= 0) rr += 1 / (at + 1);
  }
  const q = queries.length;
  return { queries: q, top1: top1 / q, top3: top3 / q, mrr: rr / q, misses };
}

async function score(search: (q: string) => Promise<string[]>): Promise<Omit<EvalScore, 'ranking' | 'readiness'>> {
  const development = await split(search, EVAL_QUERIES);
  const heldOut = await split(search, HELD_OUT_QUERIES);
  const exactNameMisses: string[] = [];
  for (const { name } of EVAL_CATALOG) if ((await search(name))[0] !== name) exactNameMisses.push(name);
  return { ...development, exactNameMisses, heldOut };
}

/** A fresh data folder the embedded engine can use. */
export function evalDataDir(): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-search-eval-'));
  chmodSync(dir, 0o755);
  return dir;
}
