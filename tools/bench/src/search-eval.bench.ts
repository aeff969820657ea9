/**
 * The search evaluation: top-1, top-3 and MRR of search_tools over MCP on the evaluation catalog (120 tools,
 * 21 domains, names and descriptions only) for 82 natural-language queries, for the lexical index alone, the
 * sentence-embedding model alone, and the shipped hybrid ranking; and whether every tool's exact name ranks it first.
 * Writes tools/bench/results/search-eval.json. Run: `npm run eval:search` (about two minutes).
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { evalDataDir, evaluateSearch, type EvalScore, type Ranking, WORKSPACE_ROOT } from '@tollgate/testing';

async function main(): Promise<void> {
  const dataDir = evalDataDir();
  const scores: EvalScore[] = [];
  try {
    for (const ranking of ['lexical', 'dense', 'hybrid'] as Ranking[]) scores.push(await evaluateSearch(ranking, dataDir));
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
  process.stdout.write(`\nsearch_tools on ${scores[0]!.queries} queries over 120 tools (through MCP)\n`);
  process.stdout.write(`${'ranking'.padEnd(10)}${'top-1'.padStart(8)}${'top-3'.padStart(8)}${'MRR'.padStart(8)}  exact name first\n`);
  for (const s of scores) process.stdout.write(`${s.ranking.padEnd(10)}${pct(s.top1).padStart(8)}${pct(s.top3).padStart(8)}${s.mrr.toFixed(3).padStart(8)}  ${120 - s.exactNameMisses.length}/120\n`);
  const shipped = scores.find((s) => s.ranking === 'hybrid')!;
  for (const m of shipped.misses) process.stdout.write(`  hybrid miss: "${m.query}" → expected ${m.expected}, got ${m.got.join(', ')}\n`);
  const out = path.join(WORKSPACE_ROOT, 'tools/bench/results');
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, 'search-eval.json'), JSON.stringify({ at: new Date().toISOString(), scores: scores.map(({ readiness: _r, ...s }) => s) }, null, 2) + '\n');
}

main().catch((err) => {
  process.stderr.write(`${String(err?.stack ?? err)}\n`);
  process.exit(1);
});
