import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { type CallerIdentity } from '../authenticate/authenticate.usecase';
import { type CatalogTool, displayPrice, isAccessible, structuredPrice, type UrlProfile } from '../catalog/catalog-access';
import { CatalogIndex } from '../catalog/catalog-index.service';
import { FreeCallsService } from '../catalog/free-calls.service';
import { GATEWAY_OPTIONS } from '../gateway.constants';
import { type GatewayOptions } from '../gateway.options';
import { checkArguments, invalidArguments, refusal, SEARCH_TOOLS_INPUT, structuredResult } from '../hosted-tools/hosted-tools';
import { RateLimits } from '../rate-limit/rate-limits.service';
import { type CursorState, MAX_PAGES, type SavedSearch, SearchCursorCodec } from './search-cursor';

export const MAX_QUERY_CHARS = 500;
export const MAX_QUERY_BYTES = 1500;
export const MAX_CATEGORY_CHARS = 64;
export const MAX_LIMIT = 50;
export const DEFAULT_LIMITS = { names: 10, summary: 5, full: 3 } as const;
/** G3.8: the whole tool result (structuredContent plus the same JSON as text) stays within 256 KiB. */
export const MAX_RESPONSE_BYTES = 256 * 1024;
/** At `full`, an input schema larger than this is left out with a note to read it through get_tool. */
export const MAX_INLINE_SCHEMA_BYTES = 16 * 1024;

/** C0 and C1 control characters become spaces (G3.1). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARS = /[\u0000-\u001F\u007F-\u009F]/g;

type Detail = SavedSearch['detail'];
interface SearchArgs { query?: string; category?: string; detail?: Detail; limit?: number; cursor?: string }

/**
 * search_tools (G3): free, never calls a provider. Ranks this URL's accessible
 * catalog with the in-memory index, pages with signed cursors, and keeps the
 * response within the byte cap.
 */
@Injectable()
export class SearchToolsUseCase {
  private readonly cursors: SearchCursorCodec;

  constructor(
    private readonly catalog: CatalogIndex,
    private readonly freeCalls: FreeCallsService,
    private readonly limits: RateLimits,
    @Inject(GATEWAY_OPTIONS) options: GatewayOptions,
  ) {
    this.cursors = new SearchCursorCodec(createHash('sha256').update(`tollgate/search-cursor/${options.cursorSecret}`).digest());
  }

  async execute(caller: CallerIdentity, profile: UrlProfile, raw: unknown, now = Date.now()) {
    const bad = checkArguments(SEARCH_TOOLS_INPUT, raw);
    if (bad) return bad;
    const args = raw as SearchArgs;
    let state: CursorState;
    if (args.cursor !== undefined) {
      const saved = this.cursors.decode(args.cursor, { credentialId: caller.credentialId, mcpUrlId: profile.mcpUrlId }, now);
      if (!saved) return refusal({ code: 'INVALID_CURSOR', retryable: false, message: 'This search expired. Search again.' });
      state = saved;
    } else {
      const saved = this.normalise(args);
      if ('content' in saved) return saved;
      state = { ...saved, offset: 0, page: 1, firstPageAt: now, credentialId: caller.credentialId, mcpUrlId: profile.mcpUrlId };
    }
    const limited = await this.limits.consume('search', caller.agentId, now);
    if (!limited.ok) {
      return refusal({ code: 'RATE_LIMITED', retryable: true, retryAfterMs: limited.retryAfterMs, message: `At most 30 searches per agent per minute. Retry in ${Math.ceil(limited.retryAfterMs / 1000)} s.` });
    }
    return structuredResult(await this.page(caller, profile, state));
  }

  /** Validates and normalises a first-page request into the search a cursor will carry. */
  private normalise(args: SearchArgs): SavedSearch | ReturnType<typeof invalidArguments> {
    if (args.query === undefined) return invalidArguments([{ field: 'query', problem: 'is required unless cursor is given' }]);
    const query = args.query.replace(CONTROL_CHARS, ' ');
    const problems: { field: string; problem: string }[] = [];
    if ([...query].length > MAX_QUERY_CHARS) problems.push({ field: 'query', problem: `is longer than ${MAX_QUERY_CHARS} characters` });
    if (Buffer.byteLength(query, 'utf8') > MAX_QUERY_BYTES) problems.push({ field: 'query', problem: `is longer than ${MAX_QUERY_BYTES} UTF-8 bytes` });
    const category = args.category === undefined || args.category === '' ? null : args.category.toLowerCase();
    if (category !== null && [...category].length > MAX_CATEGORY_CHARS) problems.push({ field: 'category', problem: `is longer than ${MAX_CATEGORY_CHARS} characters` });
    if (problems.length > 0) return invalidArguments(problems);
    const detail = args.detail ?? 'summary';
    const limit = args.limit === undefined || args.limit < 1 ? DEFAULT_LIMITS[detail] : Math.min(args.limit, MAX_LIMIT);
    return { query, category, detail, limit };
  }

  async page(caller: CallerIdentity, profile: UrlProfile, state: CursorState) {
    // Access is checked again on every page: the scope in force now decides, not the one of the first page.
    const accessible = (t: CatalogTool) => isAccessible(t, profile);
    const ranked = await this.catalog.rank(state.query, (t) => accessible(t) && (state.category === null || t.category === state.category));
    const categories = profile.scopeTools === null && profile.scopeCategories === null ? new Set(this.catalog.allCategories()) : new Set<string>();
    if (profile.scopeTools !== null || profile.scopeCategories !== null) for (const t of this.catalog.all()) if (accessible(t)) categories.add(t.category);
    const slice = ranked.slice(state.offset, state.offset + state.limit);
    const free = state.detail === 'names' ? new Map<string, number | null>() : await this.freeCalls.leftToday(caller.agentId, slice.map((r) => r.tool));

    const envelope = (results: unknown[], nextCursor: string | null) => ({
      results, categories: [...categories].sort(), total: ranked.length, nextCursor, limitApplied: state.limit,
    });
    // Bytes of the final tool result: the JSON twice, once as structuredContent and once escaped inside a text block.
    const sizeOf = (v: unknown) => {
      const json = JSON.stringify(v);
      return Buffer.byteLength(json, 'utf8') + Buffer.byteLength(JSON.stringify(json), 'utf8');
    };
    const reserve = sizeOf(envelope([], 'x'.repeat(1024))) + 64;
    let used = reserve;
    const results: Record<string, unknown>[] = [];
    for (const { tool, score } of slice) {
      const r = this.result(tool, score, state.detail, free.get(tool.name) ?? null);
      const bytes = sizeOf(r) + 2;
      if (used + bytes > MAX_RESPONSE_BYTES) break;
      used += bytes;
      results.push(r);
    }
    const next = state.offset + results.length;
    const nextCursor = next < ranked.length && state.page < MAX_PAGES && results.length > 0
      ? this.cursors.encode({ ...state, offset: next, page: state.page + 1 })
      : null;
    return envelope(results, nextCursor);
  }

  private result(tool: CatalogTool, score: number, detail: Detail, freeCallsLeftToday: number | null): Record<string, unknown> {
    const r: Record<string, unknown> = { name: tool.name, score };
    if (tool.notReviewed) r['notReviewed'] = true;
    if (detail === 'names') return r;
    Object.assign(r, {
      summary: tool.summary, version: tool.version, kind: tool.kind, price: displayPrice(tool), assayPrice: structuredPrice(tool), freeCallsLeftToday,
    });
    if (detail === 'full') {
      const bytes = Buffer.byteLength(JSON.stringify(tool.inputSchema), 'utf8');
      if (bytes <= MAX_INLINE_SCHEMA_BYTES) r['inputSchema'] = tool.inputSchema;
      else Object.assign(r, { inputSchemaOmitted: true, note: `The input schema is ${bytes} bytes; read it with get_tool {"name": "${tool.name}"}.` });
    }
    return r;
  }
}
