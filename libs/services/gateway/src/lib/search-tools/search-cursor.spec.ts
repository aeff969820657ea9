import { CURSOR_TTL_MS, type CursorState, SearchCursorCodec } from './search-cursor';

// G3.9: cursors bound to credential and URL, 10-minute expiry after the first page, at most 10 pages, tamper-proof.
describe('SearchCursorCodec (G3.5, G3.9)', () => {
  const codec = new SearchCursorCodec(Buffer.from('k'.repeat(32)));
  const who = { credentialId: 'cred-1', mcpUrlId: 'url-1' };
  const t0 = 1_800_000_000_000;
  const state: CursorState = { query: 'weather', category: null, detail: 'names', limit: 2, offset: 2, page: 2, firstPageAt: t0, ...who };

  it('round-trips the saved search', () => {
    expect(codec.decode(codec.encode(state), who, t0 + 1000)).toEqual(state);
  });

  it('expires 10 minutes after the first page', () => {
    const c = codec.encode({ ...state, page: 7 });
    expect(codec.decode(c, who, t0 + CURSOR_TTL_MS)).toBeDefined();
    expect(codec.decode(c, who, t0 + CURSOR_TTL_MS + 1)).toBeUndefined();
  });

  it('refuses another credential, another URL, a page past the tenth, and any altered byte', () => {
    const c = codec.encode(state);
    expect(codec.decode(c, { ...who, credentialId: 'cred-2' }, t0)).toBeUndefined();
    expect(codec.decode(c, { ...who, mcpUrlId: 'url-2' }, t0)).toBeUndefined();
    expect(codec.decode(codec.encode({ ...state, page: 11 }), who, t0)).toBeUndefined();
    const flipped = c.slice(0, 5) + (c[5] === 'A' ? 'B' : 'A') + c.slice(6);
    expect(codec.decode(flipped, who, t0)).toBeUndefined();
    expect(codec.decode('not-a-cursor', who, t0)).toBeUndefined();
    expect(new SearchCursorCodec(Buffer.from('other-key'.repeat(4))).decode(c, who, t0)).toBeUndefined();
  });
});
