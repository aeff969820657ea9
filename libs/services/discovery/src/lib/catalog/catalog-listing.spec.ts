import { catalogEventOf, kindOf, mergeListings, optionalFieldsOf, sanitizeListing, summaryOf, taskSupportOf, type ToolState } from './catalog-listing';

describe('catalog listing (G4, G10, R2, R3)', () => {
  it('keeps only well-formed listing fields from an upstream (provider output is data)', () => {
    expect(sanitizeListing({ category: 'Weather', tags: ['A'], priceMinor: '10', freeCallsPerDay: 2, evil: 'x', asset: 'usd' })).toEqual({ category: 'weather', tags: ['a'], priceMinor: '10', freeCallsPerDay: 2 });
    expect(sanitizeListing({ priceMinor: 10, freeCallsPerDay: -1, category: 'x'.repeat(65) })).toEqual({});
    expect(sanitizeListing('nope')).toEqual({});
  });

  it('lets later layers win and skips undefined', () => {
    expect(mergeListings({ category: 'a', tier: 't' }, { category: 'b' }, { tier: undefined })).toEqual({ category: 'b', tier: 't' });
  });

  it('derives optional fields, summary and kind', () => {
    expect(optionalFieldsOf({ type: 'object', properties: { a: {}, b: {}, c: {} }, required: ['b'] })).toEqual(['a', 'c']);
    expect(summaryOf('Counts words. Then more.')).toBe('Counts words.');
    expect(kindOf({ readOnlyHint: true })).toBe('read');
    expect(kindOf({ readOnlyHint: true, destructiveHint: true })).toBe('write');
    expect(kindOf(undefined)).toBe('write');
  });

  it('publishes the approved version\'s contract with pending and retired versions listed', () => {
    const v = (version: number, state: 'approved' | 'pending' | 'retired', props: string[]) => ({
      version, contractHash: String(version).repeat(64).slice(0, 64), state, title: null, description: 'Looks up. More.', listing: {},
      inputSchema: { type: 'object', properties: Object.fromEntries(props.map((p) => [p, {}])) }, outputSchema: null, annotations: null, execution: null, providerMeta: null, note: 'n', at: '2026-01-01T00:00:00.000Z',
    });
    const state: ToolState = {
      toolId: 't', name: 't', status: 'active', reviewed: false, overrides: { priceMinor: '5' },
      versions: [v(1, 'retired', ['a']), v(2, 'approved', ['a', 'b']), v(3, 'pending', ['a', 'b', 'c'])],
      bindings: [{ providerId: 'p', transport: 'http', endpoint: 'http://x', upstreamToolName: 't', contractHash: '3'.repeat(64), health: 'healthy', providerDefaults: { category: 'maps', priceMinor: '1' } }],
    };
    const e = catalogEventOf(state);
    expect(e).toMatchObject({ version: 2, pendingVersion: 3, retiredVersions: [1], category: 'maps', price: { amountMinor: '5', asset: 'USDC' }, notReviewed: true, summary: 'Looks up.', kind: 'write' });
    expect(Object.keys(e.inputSchema['properties'] as object)).toEqual(['a', 'b']);
    expect(e.bindings[0]).toMatchObject({ bindingId: 'p:t', contractHash: '3'.repeat(64) });
    expect(e.changelog.map((c) => c.state)).toEqual(['retired', 'approved', 'pending']);
    expect(e.taskSupport).toBeUndefined();
  });

  it('carries the approved version\'s task support; a tool that must run as a task is never read-only (R2)', () => {
    const version = (execution: ToolState['versions'][number]['execution']) => ({
      version: 1, contractHash: 'a'.repeat(64), state: 'approved' as const, title: null, description: 'Computes.', listing: {}, inputSchema: { type: 'object' },
      outputSchema: null, annotations: { readOnlyHint: true }, execution, providerMeta: null, note: 'n', at: '2026-01-01T00:00:00.000Z',
    });
    const event = (execution: ToolState['versions'][number]['execution']) => catalogEventOf({
      toolId: 't', name: 't', status: 'active', reviewed: true, overrides: {}, versions: [version(execution)],
      bindings: [{ providerId: 'p', transport: 'http', endpoint: 'http://x', upstreamToolName: 't', contractHash: 'a'.repeat(64), health: 'healthy', providerDefaults: {} }],
    });
    expect(event({ taskSupport: 'optional' })).toMatchObject({ taskSupport: 'optional', kind: 'read' });
    expect(event({ taskSupport: 'required' })).toMatchObject({ taskSupport: 'required', kind: 'write' });
    expect(event({ taskSupport: 'forbidden' }).taskSupport).toBeUndefined();
    expect(event(null)).toMatchObject({ kind: 'read' });
    expect(event(null).taskSupport).toBeUndefined();
  });

  it('the listing decides task support where the provider\'s tools/list no longer says (2026-07-28)', () => {
    expect(taskSupportOf(null, sanitizeListing({ taskSupport: 'optional' }))).toBe('optional');
    expect(taskSupportOf({ taskSupport: 'optional' }, sanitizeListing({ taskSupport: 'forbidden' }))).toBeUndefined();
    expect(taskSupportOf({ taskSupport: 'required' }, { taskSupport: 'forbidden' })).toBe('required');
    expect(taskSupportOf(null, sanitizeListing({ taskSupport: 'required' }))).toBe('required');
    expect(sanitizeListing({ taskSupport: 'always' }).taskSupport).toBeUndefined();
  });
});
