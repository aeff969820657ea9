import fc from 'fast-check';
import { DEFAULT_HYBRID_WEIGHTS, type HybridCandidate, hybridRank, normalised } from './hybrid-ranking';

const name = fc.stringMatching(/^[a-z]{2,8}(_[a-z]{2,8}){0,2}$/);
const candidate = fc.record({
  id: fc.uuid(), name, category: fc.constantFrom('general', 'weather', 'payments'), tags: fc.array(fc.constantFrom('money', 'text', 'geo'), { maxLength: 2 }),
  lexical: fc.oneof(fc.constant(0), fc.double({ min: 0.01, max: 50, noNaN: true })), dense: fc.oneof(fc.constant(null), fc.double({ min: -1, max: 1, noNaN: true })),
});
const catalog = fc.uniqueArray(candidate, { minLength: 1, maxLength: 30, selector: (c) => c.name });

describe('hybrid ranking', () => {
  it('property: a query that is exactly a tool\'s name ranks that tool first', () => {
    fc.assert(fc.property(catalog, fc.nat(), fc.constantFrom('', ' ', 'UPPER'), (tools, pick, variant) => {
      const target = tools[pick % tools.length]!;
      const query = variant === 'UPPER' ? target.name.toUpperCase() : variant === ' ' ? target.name.replace(/_/g, ' ') : target.name;
      expect(hybridRank(query, tools)[0]!.id).toBe(target.id);
    }));
  });

  it('property: only lexical matches and tools at or above the cosine floor are returned, best first', () => {
    fc.assert(fc.property(catalog, fc.string({ maxLength: 30 }), (tools, query) => {
      const ranked = hybridRank(query, tools);
      const byId = new Map(tools.map((t) => [t.id, t]));
      for (const r of ranked) {
        const t = byId.get(r.id)!;
        expect(t.lexical > 0 || (t.dense !== null && t.dense >= DEFAULT_HYBRID_WEIGHTS.floor) || normalised(t.name) === normalised(query)).toBe(true);
      }
      for (let i = 1; i < ranked.length; i++) expect(ranked[i - 1]!.score).toBeGreaterThanOrEqual(ranked[i]!.score);
    }));
  });

  it('property: with everything else equal, a closer meaning ranks higher', () => {
    fc.assert(fc.property(fc.double({ min: DEFAULT_HYBRID_WEIGHTS.floor, max: 1, noNaN: true }), fc.double({ min: DEFAULT_HYBRID_WEIGHTS.floor, max: 1, noNaN: true }), (d1, d2) => {
      fc.pre(Math.abs(d1 - d2) > 0.002);
      const base = { category: 'general', tags: [], lexical: 0 };
      const tools: HybridCandidate[] = [{ ...base, id: 'a', name: 'alpha_tool', dense: d1 }, { ...base, id: 'b', name: 'beta_tool', dense: d2 }];
      expect(hybridRank('something else entirely', tools)[0]!.id).toBe(d1 > d2 ? 'a' : 'b');
    }));
  });

  it('a query naming every word of a tool\'s name lifts it over a slightly closer meaning', () => {
    const tools: HybridCandidate[] = [
      { id: 'f', name: 'search_flights', category: 'travel', tags: [], lexical: 1, dense: 0.5 },
      { id: 'h', name: 'search_hotels', category: 'travel', tags: [], lexical: 1, dense: 0.55 },
    ];
    expect(hybridRank('search flights to Rome', tools)[0]!.id).toBe('f');
  });

  it('ranks lexically when no tool has an embedding (the model could not be loaded)', () => {
    const tools: HybridCandidate[] = [
      { id: 'a', name: 'get_forecast', category: 'weather', tags: [], lexical: 5, dense: null },
      { id: 'b', name: 'get_alerts', category: 'weather', tags: [], lexical: 9, dense: null },
      { id: 'c', name: 'unrelated', category: 'general', tags: [], lexical: 0, dense: null },
    ];
    expect(hybridRank('weather', tools).map((r) => r.id)).toEqual(['b', 'a']);
  });
});
