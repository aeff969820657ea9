import { createHash } from 'node:crypto';
import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit, Optional } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import MiniSearch from 'minisearch';
import { ChannelListener } from '@tollgate/persistence';
import { type DataSource } from 'typeorm';
import { createLogger } from '@tollgate/observability';
import { GATEWAY, GATEWAY_OPTIONS } from '../gateway.constants';
import { type GatewayOptions } from '../gateway.options';
import { DEFAULT_HYBRID_WEIGHTS, type HybridCandidate, hybridRank, normalised } from '../semantic-search/hybrid-ranking';
import { type Nearest, SemanticIndex } from '../semantic-search/semantic-index.service';
import { CatalogTools } from '../sync-catalog/catalog-tools.repository';
import { CATALOG_CHANGED_CHANNEL } from '../sync-catalog/sync-catalog.usecase';
import { type CatalogTool } from './catalog-access';

const logger = createLogger(GATEWAY);

/** Words that carry no meaning for ranking ("weather forecast FOR A city"). */
const STOP_WORDS = new Set(['a', 'an', 'and', 'the', 'for', 'of', 'to', 'in', 'on', 'by', 'with', 'from', 'at', 'or', 'is', 'it', 'me', 'my', 'i', 'this', 'that']);

/** Two lists sorted by score (best first) merged into one. */
function mergeByScore<T extends { score: number }>(a: T[], b: T[]): T[] {
  if (b.length === 0) return a;
  const out: T[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) out.push(j >= b.length || (i < a.length && a[i]!.score >= b[j]!.score) ? a[i++]! : b[j++]!);
  return out;
}

/** Lexical matches (best first) whose cosine is computed when they are not among the nearest tools. */
const LEXICAL_WITH_COSINE = 300;

/** Distinct queries whose ranking is kept until the catalog changes (cursor pages and repeated searches reuse it). */
const RANKING_CACHE_SIZE = 500;

export interface Ranked {
  tool: CatalogTool;
  score: number;
}

/**
 * The catalog in memory, with a MiniSearch full-text index (BM25+ over name,
 * summary, tags, category and description, with prefix and fuzzy matching)
 * and, when the model is loaded, the tools' sentence embeddings (SemanticIndex),
 * combined by `hybridRank` — so search_tools never touches the database for
 * ranking. Every instance
 * keeps its own copy, loaded from the read model and reloaded when any
 * instance commits a catalog change (PostgreSQL LISTEN/NOTIFY), with a slow
 * poll as a safety net.
 */
@Injectable()
export class CatalogIndex implements OnModuleInit, OnApplicationShutdown {
  private byName = new Map<string, CatalogTool>();
  private byId = new Map<string, CatalogTool>();
  /** Active tools' normalised names, kept for the hybrid ranking's exact-name test. */
  private norms = new Map<string, { norm: string; words: string[] }>();
  private byNorm = new Map<string, string>();
  /** Active tools by name, for an empty query; and every active tool's category. Both rebuilt on reload. */
  private sorted: CatalogTool[] = [];
  private categories: string[] = [];
  /** query → every hit with its score, for the catalog as loaded now; cleared on reload. Scope is applied per request. */
  private readonly rankings = new Map<string, { id: string; score: number }[]>();
  private index = CatalogIndex.emptyIndex();
  private listener?: ChannelListener;
  private reloadTimer?: NodeJS.Timeout;
  private pollTimer?: NodeJS.Timeout;
  private loading?: Promise<void>;
  private dirty = false;
  /** What the last load held (tool documents), to tell a change from a reload of the same catalog. */
  private fingerprint?: string;
  private readonly changeListeners = new Set<() => void>();

  constructor(
    @InjectDataSource(GATEWAY) private readonly dataSource: DataSource,
    @Inject(GATEWAY_OPTIONS) private readonly options: GatewayOptions,
    @Optional() private readonly semantic?: SemanticIndex,
  ) {}

  static emptyIndex(): MiniSearch<CatalogTool> {
    return new MiniSearch<CatalogTool>({
      idField: 'toolId',
      fields: ['name', 'summary', 'tags', 'category', 'description'],
      extractField: (doc, field) => {
        const v = (doc as unknown as Record<string, unknown>)[field];
        if (field === 'name') return `${doc.name} ${doc.name.replace(/[_.-]+/g, ' ')}`;
        return Array.isArray(v) ? v.join(' ') : typeof v === 'string' ? v : '';
      },
      tokenize: (text) => text.split(/[^\p{L}\p{N}]+/u),
      processTerm: (term) => {
        const t = term.toLowerCase();
        return t.length === 0 || STOP_WORDS.has(t) ? null : t;
      },
      searchOptions: {
        boost: { name: 3, summary: 2, tags: 2, category: 1.5, description: 1 },
        // Prefix matching only for the last word, the one a user may still be typing ("weath").
        prefix: (term, i, terms) => i === terms.length - 1 && term.length >= 3,
        combineWith: 'OR',
      },
    });
  }

  async onModuleInit(): Promise<void> {
    await this.reload();
    await this.listen();
    this.pollTimer = setInterval(() => this.scheduleReload(), this.options.catalogPollMs);
    this.pollTimer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.pollTimer);
    clearTimeout(this.reloadTimer);
    await this.listener?.stop();
  }

  get(name: string): CatalogTool | undefined {
    return this.byName.get(name);
  }

  all(): IterableIterator<CatalogTool> {
    return this.byName.values();
  }

  /** Every tool matching `query` that `keep` lets through, best first. An empty query matches all, by name. */
  async rank(query: string, keep: (t: CatalogTool) => boolean): Promise<Ranked[]> {
    if (query.trim() === '') return this.sorted.filter(keep).map((tool) => ({ tool, score: 0 }));
    const out: Ranked[] = [];
    for (const hit of await this.hits(query)) {
      const tool = this.byId.get(hit.id);
      if (tool && keep(tool)) out.push({ tool, score: hit.score });
    }
    return out;
  }

  private async hits(query: string): Promise<{ id: string; score: number }[]> {
    const cached = this.rankings.get(query);
    if (cached) return cached;
    const generation = this.index;
    const lexical = this.lexicalHits(query);
    const dense = this.options.searchRanking === 'lexical' ? undefined : await this.semantic?.nearest(query);
    const hits = dense ? this.combined(query, lexical, dense) : lexical;
    if (generation !== this.index) return hits; // the catalog was reloaded meanwhile: do not cache a stale ranking
    if (this.rankings.size >= RANKING_CACHE_SIZE) this.rankings.delete(this.rankings.keys().next().value!);
    this.rankings.set(query, hits);
    return hits;
  }

  private lexicalHits(query: string): { id: string; score: number }[] {
    // Any word matches (BM25+ ranks tools matching more words first); typos ("weathr") only when nothing matched,
    // since fuzzy matching costs several times more (scoring is about a microsecond per matching tool).
    let found = this.index.search(query);
    if (found.length === 0) found = this.index.search(query, { fuzzy: (term) => (term.length >= 4 ? 0.25 : false), maxFuzzy: 2 });
    return found.map((h) => ({ id: h.id as string, score: Math.round(h.score * 1000) / 1000 }));
  }

  /**
   * Meaning and words together (`hybridRank`), or meaning alone in `dense` mode (the evaluation's baseline). The
   * candidates: the nearest tools at the cosine floor, every lexical match, and the tool the query names exactly.
   */
  private combined(query: string, lexical: { id: string; score: number }[], dense: Nearest): { id: string; score: number }[] {
    if (this.options.searchRanking === 'dense') {
      return dense.top.filter((h) => this.norms.has(h.id)).map((h) => ({ id: h.id, score: Math.round(h.cos * 1000) / 1000 }));
    }
    const bm25 = new Map(lexical.map((h) => [h.id, h.score]));
    const picked = new Map<string, HybridCandidate>();
    const pick = (id: string, cos: number | null) => {
      const t = this.byId.get(id);
      const n = this.norms.get(id);
      if (t && n && !picked.has(id)) picked.set(id, { id, name: t.name, norm: n.norm, nameWords: n.words, category: t.category, tags: t.tags, lexical: bm25.get(id) ?? 0, dense: cos });
    };
    for (const h of dense.top) if (h.cos >= DEFAULT_HYBRID_WEIGHTS.floor) pick(h.id, h.cos);
    lexical.slice(0, LEXICAL_WITH_COSINE).forEach((h) => pick(h.id, dense.cosineOf(h.id)));
    const exact = this.byNorm.get(normalised(query));
    if (exact) pick(exact, dense.cosineOf(exact));
    // The long tail of weak word matches (thousands, on a big catalog) stays in the results, scored by words alone,
    // without going through the full ranking: it is already in order.
    const best = lexical[0]?.score ?? 0;
    const tail = lexical.slice(LEXICAL_WITH_COSINE).filter((h) => !picked.has(h.id) && this.norms.has(h.id))
      .map((h) => ({ id: h.id, score: Math.round(((DEFAULT_HYBRID_WEIGHTS.lexical * h.score) / best) * 1000) / 1000 }));
    return mergeByScore(hybridRank(query, [...picked.values()]), tail);
  }

  /** Every category among active tools (a URL without a scope can access all of them). */
  allCategories(): readonly string[] {
    return this.categories;
  }

  /** Calls `listener` after each load that changed the catalog (not the first load, not a reload of the same rows). */
  onChange(listener: () => void): () => void {
    this.changeListeners.add(listener);
    return () => this.changeListeners.delete(listener);
  }

  /** Loads the read model for tests and benchmarks that build an index without a database. */
  replaceAll(tools: CatalogTool[]): void {
    const fingerprint = createHash('sha256').update(JSON.stringify(tools.map((t) => [t.toolId, t]).sort((a, b) => (a[0] < b[0] ? -1 : 1)))).digest('base64');
    const changed = this.fingerprint !== undefined && this.fingerprint !== fingerprint;
    this.fingerprint = fingerprint;
    const index = CatalogIndex.emptyIndex();
    const active = tools.filter((t) => t.status === 'active');
    index.addAll(active);
    this.rankings.clear();
    this.byName = new Map(tools.map((t) => [t.name, t]));
    this.byId = new Map(tools.map((t) => [t.toolId, t]));
    this.norms = new Map(active.map((t) => {
      const norm = normalised(t.name);
      return [t.toolId, { norm, words: norm.split(' ').filter(Boolean) }];
    }));
    this.byNorm = new Map([...this.norms].map(([id, n]) => [n.norm, id]));
    this.sorted = active.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.categories = [...new Set(active.filter((t) => t.bindings.length > 0).map((t) => t.category))].sort();
    this.index = index;
    // New or changed tools are embedded in the background; once done, rankings are recomputed with them.
    void this.semantic?.sync(active).then(() => this.rankings.clear());
    if (changed) for (const listener of this.changeListeners) listener();
  }

  /** Called after this instance committed a catalog change; other instances hear the NOTIFY. */
  scheduleReload(): void {
    if (this.reloadTimer) return;
    this.reloadTimer = setTimeout(() => {
      this.reloadTimer = undefined;
      void this.reload().catch((err) => logger.error({ err }, 'catalog reload failed'));
    }, 50);
  }

  async reload(): Promise<void> {
    if (this.loading) {
      this.dirty = true;
      return this.loading;
    }
    this.loading = (async () => {
      this.replaceAll(await CatalogTools.all(this.dataSource));
    })();
    try {
      await this.loading;
    } finally {
      this.loading = undefined;
    }
    if (this.dirty) {
      this.dirty = false;
      await this.reload();
    }
  }

  private async listen(): Promise<void> {
    this.listener = new ChannelListener({
      databaseUrl: this.options.databaseUrl, channel: CATALOG_CHANGED_CHANNEL, applicationName: 'tollgate-gateway-catalog',
      onNotification: () => this.scheduleReload(),
      onLost: (err) => logger.warn({ err }, 'catalog listener lost; reconnecting with back-off (the poll covers meanwhile)'),
      // Changes made while it was away were not heard: reload now.
      onRestored: () => this.scheduleReload(),
    });
    await this.listener.start();
  }

}
