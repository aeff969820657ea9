import { type CatalogToolChangedPayload, displayAmount } from '@tollgate/contracts';

export type CatalogTool = CatalogToolChangedPayload;
export type DiscoveryMode = 'full' | 'search' | 'auto';

/** An MCP URL's profile: what it exposes and how it lists it (G1). */
export interface UrlProfile {
  mcpUrlId: string;
  slug: string;
  /** Private to this owner's agents; null when shared. */
  ownerId: string | null;
  mode: DiscoveryMode;
  /** `auto`: full discovery while the accessible tools number at most this, else search. */
  autoThreshold: number;
  /** `search`: the (at most five) tools listed beside the three hosted tools. */
  pinned: string[];
  /** Null: the whole catalog. Otherwise a tool is in scope when its name or its category is listed. */
  scopeTools: string[] | null;
  scopeCategories: string[] | null;
  /** Which providers may serve calls through this URL. */
  providerRules: { allow?: string[]; deny?: string[] } | null;
  /** The caller's access policies' tool filter (tools.allow / tools.deny); absent: every tool passes. */
  allowTool?: (name: string) => boolean;
}

export const HOSTED_TOOL_NAMES = ['search_tools', 'get_tool', 'call_tool'] as const;
export const MAX_PINNED = 5;

/** In this URL's scope, active, and with at least one provider binding (listable supply). */
export function isAccessible(tool: CatalogTool, p: UrlProfile): boolean {
  return tool.status === 'active' && tool.bindings.length > 0 && inScope(tool, p) && (p.allowTool?.(tool.name) ?? true);
}

/** The URL's access scope alone: the tool's name or its category is listed, or the URL exposes the whole catalog. */
export function inScope(tool: Pick<CatalogTool, 'name' | 'category'>, p: UrlProfile): boolean {
  if (p.scopeTools === null && p.scopeCategories === null) return true;
  return (p.scopeTools?.includes(tool.name) ?? false) || (p.scopeCategories?.includes(tool.category) ?? false);
}

/** True when no healthy binding passes this URL's provider rules. */
export function noProviderFits(tool: CatalogTool, p: UrlProfile): boolean {
  const rules = p.providerRules;
  return !tool.bindings.some(
    (b) => b.health === 'healthy' && (!rules?.allow || rules.allow.includes(b.providerId)) && !(rules?.deny ?? []).includes(b.providerId),
  );
}

/** Which listing a `tools/list` gets (G1): `auto` picks by the URL's threshold and the number of accessible tools. */
export function effectiveMode(p: UrlProfile, accessibleCount: number): 'full' | 'search' {
  if (p.mode === 'auto') return accessibleCount <= p.autoThreshold ? 'full' : 'search';
  return p.mode;
}

/** `search` mode lists these catalog tools: pinned, accessible, at most five, in the URL's order. */
export function pinnedTools(p: UrlProfile, byName: (name: string) => CatalogTool | undefined): CatalogTool[] {
  return p.pinned
    .map(byName)
    .filter((t): t is CatalogTool => t !== undefined && isAccessible(t, p))
    .slice(0, MAX_PINNED);
}

/**
 * "0.01 USDC" from 10000 minor units of a 6-decimal asset; "free" for a zero price; a metered price as
 * "0.0001 USDC per 100_chars, at least 0.001 USDC, at most 0.05 USDC a call" (the most is what a call holds).
 */
export function displayPrice(tool: Pick<CatalogTool, 'price' | 'assetDecimals' | 'metered'>): string {
  const minor = BigInt(tool.price.amountMinor);
  const show = (m: bigint) => displayAmount(m, tool.price.asset, tool.assetDecimals);
  const m = tool.metered;
  if (m) return `${show(BigInt(m.unitPriceMinor))} per ${m.unit}${m.minimumMinor && m.minimumMinor !== '0' ? `, at least ${show(BigInt(m.minimumMinor))}` : ''}, at most ${show(minor)} a call`;
  return minor === 0n ? 'free' : show(minor);
}

/** "0.01 USDC" from 10000 minor units of a 6-decimal asset (derived for display, never stored). */

/** The structured price, or null for a free tool. A metered tool's `amountMinor` is the most a call may cost (held). */
export function structuredPrice(tool: Pick<CatalogTool, 'price' | 'assetDecimals' | 'metered'>): {
  amountMinor: string; asset: string; decimals: number; display: string; metered?: { unit: string; unitPriceMinor: string; minimumMinor?: string; maximumMinor: string };
} | null {
  if (BigInt(tool.price.amountMinor) === 0n) return null;
  const metered = tool.metered && { unit: tool.metered.unit, unitPriceMinor: tool.metered.unitPriceMinor, ...(tool.metered.minimumMinor ? { minimumMinor: tool.metered.minimumMinor } : {}), maximumMinor: tool.price.amountMinor };
  return { amountMinor: tool.price.amountMinor, asset: tool.price.asset, decimals: tool.assetDecimals, display: displayPrice(tool), ...(metered ? { metered } : {}) };
}

