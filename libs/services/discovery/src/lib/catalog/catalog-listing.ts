import { type CatalogToolChangedPayload, decimalsOf, money, type ToolBindingDto } from '@tollgate/contracts';
import { checkMetered, type MeteredListing } from './metered-listing';

/**
 * How a catalog tool is listed: category, tags, summary, price and the rest.
 * Three layers, later ones win: the provider's registration defaults, the
 * upstream tool's own `_meta["tollgate/listing"]`, and the admin's overrides.
 */
export interface Listing {
  category?: string;
  tags?: string[];
  summary?: string;
  kind?: 'read' | 'write';
  tier?: string;
  priceMinor?: string;
  asset?: string;
  freeCallsPerDay?: number | null;
  examples?: { title?: string; arguments: Record<string, unknown> }[];
  optionalInputFields?: string[];
  optionalOutputFields?: string[];
  deprecation?: { sunsetAt: string; replacement?: string } | null;
  readBack?: { tool: string; keyArgument: string; compare: string[] } | null;
  /**
   * Whether a task-declaring agent gets a task at once: the gateway's own decision for a 2026-07-28 provider, whose
   * tools/list no longer says (`forbidden`: never at once, even where a 2025-era provider lists `optional`).
   */
  taskSupport?: 'optional' | 'required' | 'forbidden';
  /** Priced by use (the maximum is what a call holds); `null`: back to the fixed price. */
  metered?: MeteredListing | null;
}


/**
 * Keeps only well-formed listing fields from an untrusted source (an upstream's
 * `_meta`): provider output is data, and a malformed field is dropped, not obeyed.
 */
export function sanitizeListing(raw: unknown): Listing {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return {};
  const r = raw as Record<string, unknown>;
  // A price the provider got wrong is never guessed at (a bad metered price must not become a fixed one at its
  // maximum): the provider's whole listing is refused; its registration defaults and the admin's overrides still apply.
  const metered = r['metered'] === undefined || r['metered'] === null ? undefined : checkMetered(r['metered']);
  if (metered && !metered.ok) return {};
  const out: Listing = {};
  if (r['metered'] !== undefined) out.metered = metered?.ok ? metered.metered : null;
  const str = (v: unknown, max: number) => (typeof v === 'string' && v.length > 0 && v.length <= max ? v : undefined);
  const strings = (v: unknown) => (Array.isArray(v) && v.every((x) => typeof x === 'string' && x.length <= 64) && v.length <= 32 ? (v as string[]) : undefined);
  const category = str(r['category'], 64)?.toLowerCase();
  if (category && /^[a-z0-9][a-z0-9 _/-]{0,63}$/.test(category)) out.category = category;
  const tags = strings(r['tags']);
  if (tags) out.tags = tags.map((t) => t.toLowerCase());
  const summary = str(r['summary'], 1000);
  if (summary) out.summary = summary;
  if (r['kind'] === 'read' || r['kind'] === 'write') out.kind = r['kind'];
  const tier = str(r['tier'], 32);
  if (tier) out.tier = tier;
  if (typeof r['priceMinor'] === 'string' && /^(0|[1-9][0-9]{0,17})$/.test(r['priceMinor'])) out.priceMinor = r['priceMinor'];
  const asset = str(r['asset'], 12);
  if (asset && /^[A-Z][A-Z0-9]{1,11}$/.test(asset)) out.asset = asset;
  if (r['freeCallsPerDay'] === null || (Number.isInteger(r['freeCallsPerDay']) && (r['freeCallsPerDay'] as number) >= 0)) out.freeCallsPerDay = r['freeCallsPerDay'] as number | null;
  if (Array.isArray(r['examples']) && r['examples'].length <= 10) out.examples = examplesOf(r['examples']);
  const oi = strings(r['optionalInputFields']);
  if (oi) out.optionalInputFields = oi;
  const oo = strings(r['optionalOutputFields']);
  if (oo) out.optionalOutputFields = oo;
  const dep = r['deprecation'];
  if (dep === null) out.deprecation = null;
  else if (deprecationOf(dep)) out.deprecation = deprecationOf(dep);
  if (r['taskSupport'] === 'optional' || r['taskSupport'] === 'required' || r['taskSupport'] === 'forbidden') out.taskSupport = r['taskSupport'];
  const rb = r['readBack'];
  if (rb === null) out.readBack = null;
  else if (readBackOf(rb, strings)) out.readBack = readBackOf(rb, strings);
  return out;
}

/** Why a provider's listing is refused as a whole (its metered price is malformed), naming the field; else undefined. */
export function listingRefusal(raw: unknown): string | undefined {
  const metered = typeof raw === 'object' && raw !== null ? (raw as Record<string, unknown>)['metered'] : undefined;
  if (metered === undefined || metered === null) return undefined;
  const checked = checkMetered(metered);
  return checked.ok ? undefined : checked.problem;
}

/** Examples with an arguments object (and a title, at most 500 characters). */
function examplesOf(raw: unknown[]): NonNullable<Listing['examples']> {
  const ex = raw.filter((e): e is { title?: string; arguments: Record<string, unknown> } =>
    typeof e === 'object' && e !== null && typeof (e as Record<string, unknown>)['arguments'] === 'object' && (e as Record<string, unknown>)['arguments'] !== null,
  );
  return ex.map((e) => ({ ...(typeof e.title === 'string' ? { title: e.title.slice(0, 500) } : {}), arguments: e.arguments }));
}

/** A deprecation with a valid sunset time (and a replacement's name), else undefined. */
function deprecationOf(dep: unknown): Listing['deprecation'] | undefined {
  if (typeof dep !== 'object' || dep === null) return undefined;
  const d = dep as { sunsetAt?: unknown; replacement?: unknown };
  if (typeof d.sunsetAt !== 'string' || Number.isNaN(Date.parse(d.sunsetAt))) return undefined;
  return { sunsetAt: new Date(d.sunsetAt).toISOString(), ...(typeof d.replacement === 'string' ? { replacement: d.replacement } : {}) };
}

/** A read-back declaration naming a tool, the key argument and the fields to compare, else undefined. */
function readBackOf(rb: unknown, strings: (v: unknown) => string[] | undefined): Listing['readBack'] | undefined {
  if (typeof rb !== 'object' || rb === null) return undefined;
  const x = rb as Record<string, unknown>;
  const compare = strings(x['compare']);
  if (typeof x['tool'] !== 'string' || !/^[A-Za-z0-9_.-]{1,128}$/.test(x['tool']) || typeof x['keyArgument'] !== 'string' || x['keyArgument'].length === 0 || !compare) return undefined;
  return { tool: x['tool'], keyArgument: x['keyArgument'], compare };
}

export function mergeListings(...layers: Listing[]): Listing {
  const out: Listing = {};
  for (const layer of layers) {
    for (const [k, v] of Object.entries(layer)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
  }
  return out;
}

/** Properties of an object schema that are not required. */
export function optionalFieldsOf(schema: Record<string, unknown> | null | undefined): string[] {
  if (!schema || typeof schema['properties'] !== 'object' || schema['properties'] === null) return [];
  const required = new Set(Array.isArray(schema['required']) ? (schema['required'] as string[]) : []);
  return Object.keys(schema['properties'] as object).filter((p) => !required.has(p)).sort();
}

/** The first sentence of a description, as a summary when none was given. */
export function summaryOf(description: string): string {
  const text = description.replace(/\s+/g, ' ').trim();
  const first = text.match(/^(.{1,300}?[.!?])(\s|$)/)?.[1] ?? text.slice(0, 300);
  return first;
}

/**
 * Whether the tool runs as a task: `required` when its contract says so; else what the listing says (provider or
 * admin; `forbidden`: never); else what a 2025-era provider lists; else absent.
 */
export function taskSupportOf(execution: { taskSupport?: string } | null | undefined, listing: Pick<Listing, 'taskSupport'> = {}): 'optional' | 'required' | undefined {
  const t = execution?.taskSupport;
  if (t === 'required') return t;
  if (listing.taskSupport) return listing.taskSupport === 'forbidden' ? undefined : listing.taskSupport;
  return t === 'optional' ? t : undefined;
}

/** R2: hints narrow scope, they never grant anything: only an explicit read-only, non-destructive tool is `read`. */
export function kindOf(annotations: Record<string, unknown> | null | undefined): 'read' | 'write' {
  return annotations?.['readOnlyHint'] === true && annotations?.['destructiveHint'] !== true ? 'read' : 'write';
}

export interface ToolState {
  toolId: string;
  name: string;
  status: 'active' | 'removed';
  reviewed: boolean;
  overrides: Listing;
  versions: {
    version: number;
    contractHash: string;
    state: 'approved' | 'pending' | 'retired';
    title: string | null;
    description: string;
    inputSchema: Record<string, unknown>;
    outputSchema: Record<string, unknown> | null;
    annotations: Record<string, unknown> | null;
    execution: { taskSupport?: 'required' | 'optional' | 'forbidden' } | null;
    listing: Listing;
    providerMeta: Record<string, unknown> | null;
    note: string;
    at: string;
  }[];
  bindings: (Omit<ToolBindingDto, 'bindingId'> & { providerDefaults: Listing })[];
}

/** The catalog event for a tool as it is in force: the approved version's contract, merged listing, live bindings. */
/** A tool's other versions as the catalog event carries them: the newest pending one, the retired ones, the changelog. */
function versionsOf(t: ToolState): Pick<CatalogToolChangedPayload, 'pendingVersion' | 'retiredVersions' | 'changelog'> {
  const pending = t.versions.filter((v) => v.state === 'pending').map((v) => v.version);
  return {
    ...(pending.length > 0 ? { pendingVersion: Math.max(...pending) } : {}),
    retiredVersions: t.versions.filter((v) => v.state === 'retired').map((v) => v.version).sort((a, b) => a - b),
    changelog: [...t.versions]
      .sort((a, b) => a.version - b.version)
      .map((v) => ({ version: v.version, contractHash: v.contractHash, state: v.state, at: v.at, note: v.note })),
  };
}

export function catalogEventOf(t: ToolState): CatalogToolChangedPayload {
  const current = t.versions.find((v) => v.state === 'approved');
  if (!current) throw new Error(`tool ${t.name} has no approved version`);
  const defaults = t.bindings[0]?.providerDefaults ?? {};
  const l = mergeListings(defaults, current.listing, t.overrides);
  const asset = l.asset ?? 'USDC';
  return {
    toolId: t.toolId,
    name: t.name,
    status: t.status,
    version: current.version,
    contractHash: current.contractHash,
    ...versionsOf(t),
    // R2: a tool that must run as a task is never the read-only runtime's, whatever its hints or listing say.
    kind: taskSupportOf(current.execution, l) === 'required' ? 'write' : l.kind ?? kindOf(current.annotations),
    category: l.category ?? 'general',
    tags: l.tags ?? [],
    summary: l.summary ?? summaryOf(current.description),
    description: current.description,
    ...(current.title ? { title: current.title } : {}),
    inputSchema: current.inputSchema,
    ...(current.outputSchema ? { outputSchema: current.outputSchema } : {}),
    optionalInputFields: l.optionalInputFields ?? optionalFieldsOf(current.inputSchema),
    optionalOutputFields: l.optionalOutputFields ?? optionalFieldsOf(current.outputSchema),
    examples: l.examples ?? [],
    ...(l.deprecation ? { deprecation: l.deprecation } : {}),
    notReviewed: !t.reviewed,
    tier: l.tier ?? 'standard',
    // A metered tool's price is the most one call may cost: what is held.
    price: money(BigInt(l.metered?.maximumMinor ?? l.priceMinor ?? '0'), asset),
    ...(l.metered ? { metered: { unit: l.metered.unit, unitPriceMinor: l.metered.unitPriceMinor, ...(l.metered.minimumMinor ? { minimumMinor: l.metered.minimumMinor } : {}) } } : {}),
    assetDecimals: decimalsOf(asset),
    ...(typeof l.freeCallsPerDay === 'number' ? { freeCallsPerDay: l.freeCallsPerDay } : {}),
    ...(current.annotations ? { annotations: current.annotations } : {}),
    ...(taskSupportOf(current.execution, l) ? { taskSupport: taskSupportOf(current.execution, l) } : {}),
    ...(l.readBack ? { readBack: l.readBack } : {}),
    ...(current.providerMeta ? { providerMeta: current.providerMeta } : {}),
    bindings: t.bindings.map(({ providerDefaults: _d, ...b }) => ({ ...b, bindingId: `${b.providerId}:${b.upstreamToolName}` })),
  };
}
