/**
 * Offline tuning aid for the hybrid ranking: scores the evaluation set in process (no MCP) for a grid of
 * weights and tool-text variants, so a change to `hybridRank` can be judged before the full evaluation over MCP.
 * Run: `node -r @swc-node/register tools/bench/src/search-tune.ts`.
 */
import { CatalogIndex, cosine, DEFAULT_HYBRID_WEIGHTS, type GatewayOptions, hybridRank, type HybridWeights, SentenceEncoder } from '@tollgate/gateway-service';
import { EVAL_CATALOG, EVAL_QUERIES } from '@tollgate/testing';

async function main(): Promise<void> {
  const encoder = await SentenceEncoder.load('infra/models/.data/all-minilm-l6-v2-q');
  const tools = EVAL_CATALOG.map((t) => ({ toolId: t.name, name: t.name, summary: t.description, description: t.description, category: 'general', tags: [] as string[], status: 'active', bindings: [{}] }));
  const index = new CatalogIndex(undefined as never, { searchRanking: 'lexical' } as GatewayOptions);
  index.replaceAll(tools as never);
  const texts: Record<string, (t: (typeof tools)[0]) => string> = {
    nameDesc: (t) => `${t.name.replace(/_/g, ' ')}. ${t.description}`,
    desc: (t) => t.description,
    name: (t) => t.name.replace(/_/g, ' '),
  };
  const vecs: Record<string, Float32Array[]> = {};
  // One text per inference: the quantized model's activation scale depends on what shares a batch (see SentenceEncoder).
  const one = (texts: string[]) => encoder.embedEach(texts);
  for (const [k, f] of Object.entries(texts)) vecs[k] = await one(tools.map(f));
  const STOP = new Set('a an and the for of to in on by with from at or is it me my i this that what how do does can will are there any which who when where much many is was be i\'m our we you your get give show tell make let please'.split(' '));
  const stripped = (q: string) => q.toLowerCase().split(/[^a-z0-9@.]+/).filter((w) => w && !STOP.has(w)).join(' ') || q;
  const plainQ = await one(EVAL_QUERIES.map((q) => q.query));
  const strippedQ = await one(EVAL_QUERIES.map((q) => stripped(q.query)));
  const queries = plainQ.map((v, i) => { const m = new Float32Array(v.length); let n = 0; for (let d = 0; d < v.length; d++) { m[d] = v[d]! + strippedQ[i]![d]!; n += m[d]! * m[d]!; } const s = 1 / Math.sqrt(n); for (let d = 0; d < v.length; d++) m[d]! *= s; return process.env['QMODE'] === 'plain' ? v : process.env['QMODE'] === 'stripped' ? strippedQ[i]! : m; });
  const lexical = await Promise.all(EVAL_QUERIES.map(async (q) => new Map((await index.rank(q.query, () => true)).map((r) => [r.tool.name, r.score]))));
  const evaluate = (w: HybridWeights, dense: (qi: number, ti: number) => number) => {
    let top3 = 0, rr = 0;
    EVAL_QUERIES.forEach((q, qi) => {
      const ranked = hybridRank(q.query, tools.map((t, ti) => ({ id: t.name, name: t.name, category: t.category, tags: t.tags, lexical: lexical[qi]!.get(t.name) ?? 0, dense: dense(qi, ti) })), w);
      const at = ranked.findIndex((r) => r.id === q.expected);
      if (at >= 0 && at < 3) top3++;
      if (at >= 0) rr += 1 / (at + 1);
    });
    return { top3: +(top3 / EVAL_QUERIES.length).toFixed(3), mrr: +(rr / EVAL_QUERIES.length).toFixed(3) };
  };
  const views: Record<string, (qi: number, ti: number) => number> = {
    nameDesc: (qi, ti) => cosine(queries[qi]!, vecs['nameDesc']![ti]!),
    desc: (qi, ti) => cosine(queries[qi]!, vecs['desc']![ti]!),
    max: (qi, ti) => Math.max(cosine(queries[qi]!, vecs['nameDesc']![ti]!), cosine(queries[qi]!, vecs['desc']![ti]!)),
    mean: (qi, ti) => (cosine(queries[qi]!, vecs['nameDesc']![ti]!) + cosine(queries[qi]!, vecs['desc']![ti]!)) / 2,
    mean3: (qi, ti) => (cosine(queries[qi]!, vecs['nameDesc']![ti]!) + cosine(queries[qi]!, vecs['desc']![ti]!) + cosine(queries[qi]!, vecs['name']![ti]!)) / 3,
    mean3w: (qi, ti) => 0.4 * cosine(queries[qi]!, vecs['nameDesc']![ti]!) + 0.4 * cosine(queries[qi]!, vecs['desc']![ti]!) + 0.2 * cosine(queries[qi]!, vecs['name']![ti]!),
  };
  for (const [view, dense] of Object.entries(views)) {
    for (const lex of [0, 0.03, 0.05, 0.08, 0.1, 0.15, 0.2, 0.3]) {
      for (const nameInQuery of [0.25]) {
        process.stdout.write(`${view} ${lex} ${nameInQuery} ${JSON.stringify(evaluate({ ...DEFAULT_HYBRID_WEIGHTS, lexical: lex, nameInQuery }, dense))}\n`);
      }
    }
  }
}

void main();
