import { createHash } from 'node:crypto';
import { Inject, Injectable, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { exactSearch, type Matches, MetricKind } from 'usearch';
import { createLogger, HealthRegistry } from '@tollgate/observability';
import { type CatalogToolChangedPayload as CatalogTool } from '@tollgate/contracts';
import { GATEWAY, GATEWAY_OPTIONS } from '../gateway.constants';
import { type GatewayOptions } from '../gateway.options';
import { DIMENSIONS, SentenceEncoder } from './sentence-encoder';
import { col, defineTable } from '@tollgate/persistence';

/** `gateway.tool_embedding`: each tool's sentence embedding, keyed by the hash of the text embedded. */
export const TOOL_EMBEDDING = defineTable('gateway.tool_embedding', {
  tool_id: col.text().required(), text_hash: col.text().required(), vector: col.bytea().required(), embedded_at: col.timestamptz().required(),
});

const logger = createLogger(GATEWAY);
/** Distinct query embeddings kept (a repeated query costs no inference). */
const QUERY_CACHE_SIZE = 2000;
/** Tools embedded per inference run. */
const BATCH = 16;

export type SemanticState = 'loading' | 'ready' | 'unavailable' | 'off';

/** How many nearest tools a query considers: as many as a page sequence can reach (10 pages of at most 50). */
export const NEAREST = 500;

/** The closest tools to a query, and the cosine of any other embedded tool. */
export interface Nearest {
  top: readonly { id: string; cos: number }[];
  cosineOf(id: string): number | null;
}

interface Packed {
  ids: string[];
  rows: Map<string, number>;
  matrix: Float32Array;
}

/**
 * What a tool is, in words, for the model — two views: everything (its name as words, summary, description, tags) and
 * what it does alone (its description, else summary). A tool's vector is the mean of the two, so its dot product with
 * a query is the mean of the two cosines: on the evaluation set that beats either view alone (tools/bench/src/search-tune.ts).
 */
export function embeddingTexts(tool: Pick<CatalogTool, 'name' | 'summary' | 'description' | 'tags'>): [string, string] {
  const parts = [tool.name.replace(/[_.-]+/g, ' '), tool.summary, tool.description === tool.summary ? '' : tool.description, tool.tags.join(', ')];
  const all = parts.filter((p) => p && p.trim() !== '').join('. ');
  const does = (tool.description || tool.summary || all).trim();
  return [all, does];
}

/** The mean of two vectors of the same length. */
export function meanOf(a: Float32Array, b: Float32Array): Float32Array {
  const m = new Float32Array(a.length);
  for (let i = 0; i < a.length; i++) m[i] = (a[i]! + b[i]!) / 2;
  return m;
}

/**
 * The dense half of search_tools. Each tool is embedded once per contract text — kept in
 * `gateway.tool_embedding` keyed by the text's hash with the model's, so a restart or another replica re-embeds
 * nothing — and queries are embedded once (LRU). If the model cannot be loaded the state is `unavailable`, search
 * ranks lexically, and readiness says so.
 */
@Injectable()
export class SemanticIndex implements OnModuleInit {
  state: SemanticState = 'loading';
  reason?: string;
  private encoder?: SentenceEncoder;
  private readonly vectors = new Map<string, { hash: string; vector: Float32Array }>();
  private pack?: Packed;
  private readonly queries = new Map<string, Float32Array>();
  private syncing: Promise<void> = Promise.resolve();
  /** Tools this process ran through the model (the rest came from the table). */
  private embeddedHere = 0;

  constructor(
    @InjectDataSource(GATEWAY) private readonly dataSource: DataSource,
    @Inject(GATEWAY_OPTIONS) private readonly options: GatewayOptions,
    health: HealthRegistry,
  ) {
    health.registerStatus({ name: 'gateway.search', read: () => this.describe() });
    health.registerFigure({ name: 'gateway.search.toolsEmbedded', read: async () => this.vectors.size });
    health.registerFigure({ name: 'gateway.search.embeddedByThisProcess', read: async () => this.embeddedHere });
  }

  /** How search_tools ranks now, in words (readiness). */
  describe(): string {
    if (this.state === 'ready') return `meaning and words (${this.options.searchRanking ?? 'hybrid'}; ${this.vectors.size} tools embedded)`;
    if (this.state === 'unavailable') return `words only: the sentence-embedding model could not be loaded (${this.reason})`;
    return this.state === 'off' ? 'words only (GATEWAY_SEARCH_RANKING=lexical)' : 'loading the sentence-embedding model';
  }

  async onModuleInit(): Promise<void> {
    if ((this.options.searchRanking ?? 'hybrid') === 'lexical') {
      this.state = 'off';
      return;
    }
    try {
      this.encoder = await SentenceEncoder.load(this.options.searchModelDir ?? 'infra/models/.data/all-minilm-l6-v2-q');
      this.state = 'ready';
      logger.info({ model: this.encoder.modelSha256.slice(0, 12) }, 'search_tools ranks by meaning and words (sentence-embedding model loaded)');
    } catch (err) {
      this.state = 'unavailable';
      this.reason = err instanceof Error ? err.message : String(err);
      logger.warn({ reason: this.reason }, 'search_tools ranks lexically only: the sentence-embedding model could not be loaded (run infra/models/model.sh fetch)');
    }
  }

  get embeddedCount(): number {
    return this.vectors.size;
  }

  /** Embeds what is new or changed among `tools` (in the background; callers need not wait). */
  sync(tools: readonly CatalogTool[]): Promise<void> {
    if (!this.encoder) return Promise.resolve();
    this.syncing = this.syncing.then(() => this.embedMissing(tools)).catch((err) => logger.error({ err }, 'embedding the catalog failed; those tools rank lexically'));
    return this.syncing;
  }

  /**
   * The tools closest in meaning to the query (at most `k`, best first), and the cosine of any other embedded tool on
   * demand; undefined when the model is not in use. The scan is USearch's exact SIMD search over the packed matrix
   * (10,000 tools: about 1 ms, against 4 ms for the best plain-JavaScript loop).
   */
  async nearest(query: string, k = NEAREST): Promise<Nearest | undefined> {
    if (!this.encoder) return undefined;
    const q = await this.queryVector(query);
    const { ids, rows, matrix } = this.packed();
    const top: { id: string; cos: number }[] = [];
    if (ids.length > 0) {
      const found = exactSearch(matrix, q, DIMENSIONS, Math.min(k, ids.length), MetricKind.IP, 1) as Matches;
      found.keys.forEach((key, i) => top.push({ id: ids[Number(key)]!, cos: 1 - found.distances[i]! }));
    }
    const cosineOf = (id: string) => {
      const row = rows.get(id);
      return row === undefined ? null : dotRow(matrix, row, q);
    };
    return { top, cosineOf };
  }

  private async queryVector(query: string): Promise<Float32Array> {
    const cached = this.queries.get(query);
    if (cached) return cached;
    const [q] = await this.encoder!.embedEach([query]);
    if (this.queries.size >= QUERY_CACHE_SIZE) this.queries.delete(this.queries.keys().next().value!);
    this.queries.set(query, q!);
    return q!;
  }

  /** Every vector in one contiguous matrix (row i = ids[i]), rebuilt after a change: a cache-friendly scan. */
  private packed(): Packed {
    if (this.pack) return this.pack;
    const ids = [...this.vectors.keys()];
    const matrix = new Float32Array(ids.length * DIMENSIONS);
    ids.forEach((id, i) => matrix.set(this.vectors.get(id)!.vector, i * DIMENSIONS));
    this.pack = { ids, rows: new Map(ids.map((id, i) => [id, i])), matrix };
    return this.pack;
  }

  private hashOf(tool: CatalogTool): string {
    return createHash('sha256').update(`${this.encoder!.modelSha256}\n${embeddingTexts(tool).join('\n')}`).digest('hex');
  }

  private async embedMissing(tools: readonly CatalogTool[]): Promise<void> {
    const wanted = new Map(tools.map((t) => [t.toolId, { tool: t, hash: this.hashOf(t) }]));
    this.pack = undefined;
    for (const id of this.vectors.keys()) if (!wanted.has(id)) this.vectors.delete(id);
    let missing = [...wanted.values()].filter(({ tool, hash }) => this.vectors.get(tool.toolId)?.hash !== hash);
    if (missing.length === 0) return;
    missing = await this.loadStored(missing);
    for (let i = 0; i < missing.length; i += BATCH) {
      const batch = missing.slice(i, i + BATCH);
      const vectors = await this.encoder!.embedEach(batch.flatMap(({ tool }) => embeddingTexts(tool)));
      await this.store(batch.map(({ tool, hash }, k) => ({ id: tool.toolId, hash, vector: meanOf(vectors[2 * k]!, vectors[2 * k + 1]!) })));
      this.embeddedHere += batch.length;
    }
    if (missing.length > 0) logger.info({ embedded: missing.length, total: this.vectors.size }, 'catalog tools embedded for search_tools');
  }

  /** Takes what the table already holds for these texts; returns the rest. */
  private async loadStored(missing: { tool: CatalogTool; hash: string }[]): Promise<{ tool: CatalogTool; hash: string }[]> {
    const rows: { tool_id: string; text_hash: string; vector: Buffer }[] = await this.dataSource.query(
      'SELECT tool_id, text_hash, vector FROM gateway.tool_embedding WHERE tool_id = ANY($1)', [missing.map((m) => m.tool.toolId)]);
    const stored = new Map(rows.map((r) => [r.tool_id, r]));
    return missing.filter(({ tool, hash }) => {
      const row = stored.get(tool.toolId);
      if (!row || row.text_hash !== hash) return true;
      this.pack = undefined;
      this.vectors.set(tool.toolId, { hash, vector: new Float32Array(row.vector.buffer.slice(row.vector.byteOffset, row.vector.byteOffset + row.vector.byteLength)) });
      return false;
    });
  }

  private async store(rows: { id: string; hash: string; vector: Float32Array }[]): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO gateway.tool_embedding (tool_id, text_hash, vector)
       SELECT * FROM unnest($1::text[], $2::text[], $3::bytea[])
       ON CONFLICT (tool_id) DO UPDATE SET text_hash = EXCLUDED.text_hash, vector = EXCLUDED.vector, embedded_at = now()`,
      [rows.map((r) => r.id), rows.map((r) => r.hash), rows.map((r) => Buffer.from(r.vector.buffer, r.vector.byteOffset, r.vector.byteLength))]);
    for (const r of rows) this.vectors.set(r.id, { hash: r.hash, vector: r.vector });
    this.pack = undefined;
  }
}

/** Row `row` of `matrix` (rows × DIMENSIONS) dotted with `q`. */
export function dotRow(matrix: Float32Array, row: number, q: Float32Array): number {
  let s = 0;
  for (let d = 0, at = row * DIMENSIONS; d < DIMENSIONS; d++) s += matrix[at + d]! * q[d]!;
  return s;
}
