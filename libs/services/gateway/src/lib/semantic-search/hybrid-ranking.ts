/**
 * How search_tools orders tools: by meaning first, with the lexical index keeping what words do best. Pure,
 * so it is property-tested and tuned on the evaluation set (tools/bench/src/search-eval.bench.ts).
 *
 * score = dense (mean cosine over the tool's two views) + lexical weight × BM25 / best BM25 + bonuses
 *   - the query IS a tool's name (case, `_`, `-`, `.` and spaces aside): that tool first, whatever else;
 *   - every word of a tool's name appears in the query ("search flights to Rome"): a bonus;
 *   - the query names the tool's category or one of its tags: a small bonus.
 * A tool is a hit when the lexical index matched it, or its cosine reaches the floor; the rest is not returned.
 */
export interface HybridCandidate {
  id: string;
  name: string;
  category: string;
  tags: readonly string[];
  /** BM25+ score from the lexical index; 0 when it did not match. */
  lexical: number;
  /** Cosine similarity of the query and the tool; null when the tool has no embedding (yet). */
  dense: number | null;
  /** `normalised(name)`, when the caller keeps it precomputed (10,000 tools: it saves a regex per tool per query). */
  norm?: string;
  /** The words of `norm`, likewise. */
  nameWords?: readonly string[];
}

export interface HybridWeights {
  lexical: number;
  nameInQuery: number;
  category: number;
  tag: number;
  /** A tool the lexical index did not match is returned only with a cosine at least this. */
  floor: number;
}

/** Tuned on the evaluation set (tools/bench/src/search-tune.ts): words add a little; meaning decides. */
export const DEFAULT_HYBRID_WEIGHTS: HybridWeights = { lexical: 0.05, nameInQuery: 0.25, category: 0.05, tag: 0.03, floor: 0.2 };

/** Above any sum of the other terms: an exact name match always ranks first. */
const EXACT_NAME = 100;

export const normalised = (s: string) => s.toLowerCase().replace(/[\s_.\-/]+/g, ' ').trim();

export function hybridRank(query: string, candidates: readonly HybridCandidate[], w: HybridWeights = DEFAULT_HYBRID_WEIGHTS): { id: string; score: number }[] {
  const q = normalised(query);
  const words = new Set(q.split(' ').filter(Boolean));
  const best = Math.max(0, ...candidates.map((c) => c.lexical));
  const out: { id: string; score: number; name: string }[] = [];
  for (const c of candidates) {
    const norm = c.norm ?? normalised(c.name);
    const exact = norm === q;
    if (!exact && c.lexical <= 0 && (c.dense === null || c.dense < w.floor)) continue;
    const nameWords = c.nameWords ?? norm.split(' ').filter(Boolean);
    let score = (c.dense ?? 0) + (best > 0 ? (w.lexical * c.lexical) / best : 0);
    if (exact) score += EXACT_NAME;
    else if (nameWords.length > 0 && nameWords.every((x) => words.has(x))) score += w.nameInQuery;
    if (words.has(c.category.toLowerCase())) score += w.category;
    if (c.tags.some((t) => words.has(t.toLowerCase()))) score += w.tag;
    out.push({ id: c.id, score: Math.round(score * 1000) / 1000, name: c.name });
  }
  out.sort((a, b) => b.score - a.score || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return out.map(({ id, score }) => ({ id, score }));
}

/** Dot product of two unit vectors: their cosine similarity. */
export function cosine(a: Float32Array, b: Float32Array): number {
  let s = 0;
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!;
  return s;
}
