import { Inject, Injectable, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import MiniSearch from 'minisearch';
import { Client } from 'pg';
import { type DataSource } from 'typeorm';
import { createLogger } from '@tollgate/observability';
import { GATEWAY, GATEWAY_OPTIONS } from '../gateway.constants';
import { type GatewayOptions } from '../gateway.options';
import { CATALOG_CHANGED_CHANNEL } from '../sync-catalog/sync-catalog.usecase';
import { type CatalogTool } from './catalog-access';

const logger = createLogger(GATEWAY);

/** Words that carry no meaning for ranking ("weather forecast FOR A city"). */
const STOP_WORDS = new Set(['a', 'an', 'and', 'the', 'for', 'of', 'to', 'in', 'on', 'by', 'with', 'from', 'at', 'or', 'is', 'it', 'me', 'my', 'i', 'this', 'that']);

/** Distinct queries whose ranking is kept until the catalog changes (cursor pages and repeated searches reuse it). */
const RANKING_CACHE_SIZE = 500;

export interface Ranked {
  tool: CatalogTool;
  score: number;
}

/**
 * The catalog in memory, with a MiniSearch full-text index (BM25+ over name,
 * summary, tags, category and description, with prefix and fuzzy matching),
 * so search_tools never touches the database for ranking. Every instance
 * keeps its own copy, loaded from the read model and reloaded when any
 * instance commits a catalog change (PostgreSQL LISTEN/NOTIFY), with a slow
 * poll as a safety net.
 */
@Injectable()
export class CatalogIndex implements OnModuleInit, OnApplicationShutdown {
  private byName = new Map<string, CatalogTool>();
  private byId = new Map<string, CatalogTool>();
  /** Active tools by name, for an empty query; and every active tool's category. Both rebuilt on reload. */
  private sorted: CatalogTool[] = [];
  private categories: string[] = [];
  /** query → every hit with its score, for the catalog as loaded now; cleared on reload. Scope is applied per request. */
  private readonly rankings = new Map<string, { id: string; score: number }[]>();
  private index = CatalogIndex.emptyIndex();
  private listener?: Client;
  private reloadTimer?: NodeJS.Timeout;
  private pollTimer?: NodeJS.Timeout;
  private loading?: Promise<void>;
  private dirty = false;

  constructor(
    @InjectDataSource(GATEWAY) private readonly dataSource: DataSource,
    @Inject(GATEWAY_OPTIONS) private readonly options: GatewayOptions,
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
    await this.listener?.end().catch(() => undefined);
  }

  get(name: string): CatalogTool | undefined {
    return this.byName.get(name);
  }

  all(): IterableIterator<CatalogTool> {
    return this.byName.values();
  }

  /** Every tool matching `query` that `keep` lets through, best first. An empty query matches all, by name. */
  rank(query: string, keep: (t: CatalogTool) => boolean): Ranked[] {
    if (query.trim() === '') return this.sorted.filter(keep).map((tool) => ({ tool, score: 0 }));
    const out: Ranked[] = [];
    for (const hit of this.hits(query)) {
      const tool = this.byId.get(hit.id);
      if (tool && keep(tool)) out.push({ tool, score: hit.score });
    }
    return out;
  }

  private hits(query: string): { id: string; score: number }[] {
    const cached = this.rankings.get(query);
    if (cached) return cached;
    // Any word matches (BM25+ ranks tools matching more words first); typos ("weathr") only when nothing matched,
    // since fuzzy matching costs several times more (scoring is about a microsecond per matching tool).
    let found = this.index.search(query);
    if (found.length === 0) found = this.index.search(query, { fuzzy: (term) => (term.length >= 4 ? 0.25 : false), maxFuzzy: 2 });
    const hits = found.map((h) => ({ id: h.id as string, score: Math.round(h.score * 1000) / 1000 }));
    if (this.rankings.size >= RANKING_CACHE_SIZE) this.rankings.delete(this.rankings.keys().next().value!);
    this.rankings.set(query, hits);
    return hits;
  }

  /** Every category among active tools (a URL without a scope can access all of them). */
  allCategories(): readonly string[] {
    return this.categories;
  }

  /** Loads the read model for tests and benchmarks that build an index without a database. */
  replaceAll(tools: CatalogTool[]): void {
    const index = CatalogIndex.emptyIndex();
    const active = tools.filter((t) => t.status === 'active');
    index.addAll(active);
    this.rankings.clear();
    this.byName = new Map(tools.map((t) => [t.name, t]));
    this.byId = new Map(tools.map((t) => [t.toolId, t]));
    this.sorted = active.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    this.categories = [...new Set(active.filter((t) => t.bindings.length > 0).map((t) => t.category))].sort();
    this.index = index;
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
      const rows: { doc: CatalogTool }[] = await this.dataSource.query('SELECT doc FROM gateway.catalog_tool');
      this.replaceAll(rows.map((r) => r.doc));
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
    const client = new Client({ connectionString: this.options.databaseUrl });
    client.on('notification', () => this.scheduleReload());
    client.on('error', (err) => {
      logger.warn({ err }, 'catalog listener lost; relying on the poll until restart');
      this.listener = undefined;
    });
    await client.connect();
    await client.query(`LISTEN ${CATALOG_CHANGED_CHANNEL}`);
    this.listener = client;
  }
}
