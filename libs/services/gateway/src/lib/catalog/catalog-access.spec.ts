import fc from 'fast-check';
import { msUntilNextUtcMinute } from '../rate-limit/minute-window';
import { type CatalogTool, displayPrice, effectiveMode, isAccessible, noProviderFits, pinnedTools, type UrlProfile } from './catalog-access';

const profile = (p: Partial<UrlProfile> = {}): UrlProfile => ({
  mcpUrlId: 'u', slug: 's', ownerId: null, mode: 'full', autoThreshold: 20, pinned: [], scopeTools: null, scopeCategories: null, providerRules: null, ...p,
});
const tool = (name: string, t: Partial<CatalogTool> = {}): CatalogTool => ({
  toolId: name, name, status: 'active', category: 'weather', price: { amountMinor: '0', asset: 'USDC' }, assetDecimals: 6,
  bindings: [{ bindingId: 'p:x', providerId: 'p', transport: 'http', endpoint: 'http://x', upstreamToolName: name, contractHash: 'a'.repeat(64), health: 'healthy' }],
  ...t,
}) as CatalogTool;

describe('catalog access (G1, G4)', () => {
  it('scopes by tool name or category; removed or unsupplied tools are not accessible', () => {
    expect(isAccessible(tool('a'), profile())).toBe(true);
    expect(isAccessible(tool('a'), profile({ scopeCategories: ['maps'] }))).toBe(false);
    expect(isAccessible(tool('a'), profile({ scopeCategories: ['maps'], scopeTools: ['a'] }))).toBe(true);
    expect(isAccessible(tool('a', { status: 'removed' }), profile())).toBe(false);
    expect(isAccessible(tool('a', { bindings: [] }), profile())).toBe(false);
  });

  it('finds no fitting provider when rules or health exclude every binding', () => {
    expect(noProviderFits(tool('a'), profile())).toBe(false);
    expect(noProviderFits(tool('a'), profile({ providerRules: { deny: ['p'] } }))).toBe(true);
    expect(noProviderFits(tool('a'), profile({ providerRules: { allow: ['q'] } }))).toBe(true);
    const sick = tool('a');
    sick.bindings[0]!.health = 'unhealthy';
    expect(noProviderFits(sick, profile())).toBe(true);
  });

  it('auto picks full at or under the threshold, search above it', () => {
    expect(effectiveMode(profile({ mode: 'auto', autoThreshold: 3 }), 3)).toBe('full');
    expect(effectiveMode(profile({ mode: 'auto', autoThreshold: 3 }), 4)).toBe('search');
    expect(effectiveMode(profile({ mode: 'search' }), 0)).toBe('search');
  });

  it('pins at most five accessible tools in the URL\'s order', () => {
    const all = new Map(['a', 'b', 'c', 'd', 'e', 'f', 'g'].map((n) => [n, tool(n)]));
    const p = profile({ pinned: ['g', 'missing', 'a', 'b', 'c', 'd', 'e', 'f'] });
    expect(pinnedTools(p, (n) => all.get(n)).map((t) => t.name)).toEqual(['g', 'a', 'b', 'c', 'd']);
  });

  it('displays integer minor units exactly', () => {
    expect(displayPrice({ price: { amountMinor: '0', asset: 'USDC' }, assetDecimals: 6 })).toBe('free');
    expect(displayPrice({ price: { amountMinor: '1000', asset: 'USDC' }, assetDecimals: 6 })).toBe('0.001 USDC');
    expect(displayPrice({ price: { amountMinor: '1500000', asset: 'USDC' }, assetDecimals: 6 })).toBe('1.50 USDC');
    expect(displayPrice({ price: { amountMinor: '12345678901234567', asset: 'USDC' }, assetDecimals: 6 })).toBe('12345678901.234567 USDC');
    // Property: the digits shown are the minor units, nothing rounded.
    fc.assert(fc.property(fc.bigInt({ min: 1n, max: 10n ** 18n }), (minor) => {
      const shown = displayPrice({ price: { amountMinor: minor.toString(), asset: 'USDC' }, assetDecimals: 6 }).split(' ')[0]!;
      const [whole, frac = ''] = shown.split('.');
      expect(BigInt(whole!) * 1_000_000n + BigInt(frac.padEnd(6, '0'))).toBe(minor);
    }));
  });

  it('retryAfterMs runs to the next fixed UTC minute', () => {
    expect(msUntilNextUtcMinute(Date.UTC(2026, 0, 1, 10, 0, 45))).toBe(15_000);
    expect(msUntilNextUtcMinute(Date.UTC(2026, 0, 1, 10, 0, 0))).toBe(60_000);
  });
});
