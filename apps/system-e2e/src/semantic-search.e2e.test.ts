/**
 * Search_tools ranks by meaning and words. On the evaluation catalog (120 tools over 21 domains, names and
 * descriptions only) and its 81 natural-language queries, through search_tools over MCP: the shipped ranking stays
 * at what it measured (top-3 93.8%, MRR 0.837, against 48.1% / 0.389 for words alone — the goals of 95% / 0.88
 * are not reached with this model; see the README), every exact tool name ranks its tool first, embeddings survive a
 * restart (nothing re-embedded), and without the model search keeps working by words, readiness saying so.
 */
import { rmSync } from 'node:fs';
import { evalDataDir, evaluateSearch, type EvalScore } from '@tollgate/testing';

jest.setTimeout(600_000);

/** The shipped ranking measured top-3 0.932 and MRR 0.869 on the held-out split (44 queries); these bounds keep a margin. */
const HELD_OUT_TOP3 = 0.88;
const HELD_OUT_MRR = 0.8;

describe('search_tools by meaning', () => {
  const dataDir = evalDataDir();
  let first: EvalScore;
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('the shipped ranking finds the right tool in the top 3 for at least 90% of the queries, and an exact name always ranks first', async () => {
    first = await evaluateSearch('hybrid', dataDir);
    const h = first.heldOut;
    process.stdout.write(`\nhybrid, development split (${first.queries} queries the weights were tuned on): top-1 ${first.top1.toFixed(3)}, top-3 ${first.top3.toFixed(3)}, MRR ${first.mrr.toFixed(3)}; misses ${JSON.stringify(first.misses)}\n`
      + `hybrid, held-out split (${h.queries} queries the tuning never saw): top-1 ${h.top1.toFixed(3)}, top-3 ${h.top3.toFixed(3)}, MRR ${h.mrr.toFixed(3)}; misses ${JSON.stringify(h.misses)}\n`);
    // The guard scores the split the tuning never saw; the development split is reported beside it.
    expect(h.top3).toBeGreaterThanOrEqual(HELD_OUT_TOP3);
    expect(h.mrr).toBeGreaterThanOrEqual(HELD_OUT_MRR);
    expect(first.exactNameMisses).toEqual([]);
    expect(first.readiness).toMatchObject({ statuses: { 'gateway.search': expect.stringMatching(/^meaning and words/) } });
    expect((first.readiness as { figures: Record<string, number> }).figures['gateway.search.embeddedByThisProcess']).toBeGreaterThanOrEqual(120);
  });

  it('a restart on the same data re-embeds nothing and ranks the same', async () => {
    const again = await evaluateSearch('hybrid', dataDir);
    expect((again.readiness as { figures: Record<string, number> }).figures).toMatchObject({ 'gateway.search.embeddedByThisProcess': 0, 'gateway.search.toolsEmbedded': expect.any(Number) });
    expect({ top1: again.top1, top3: again.top3, mrr: again.mrr }).toEqual({ top1: first.top1, top3: first.top3, mrr: first.mrr });
  });

  it('without the model, search keeps working by words and readiness says why', async () => {
    const elsewhere = evalDataDir();
    const lexical = await evaluateSearch('hybrid', elsewhere, { GATEWAY_SEARCH_MODEL_DIR: '/nonexistent/model' }).finally(() => rmSync(elsewhere, { recursive: true, force: true }));
    expect(lexical.readiness).toMatchObject({ statuses: { 'gateway.search': expect.stringMatching(/^words only: the sentence-embedding model could not be loaded/) } });
    expect(lexical.exactNameMisses).toEqual([]);
    expect(lexical.top3).toBeGreaterThan(0.3);
    expect(lexical.top3).toBeLessThan(first.top3 - 0.2);
  });
});
