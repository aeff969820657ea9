import fc from 'fast-check';
import { MAX_BODY_DEPTH, unsafeBody } from './start-nest-app';

describe('request bodies the HTTP APIs refuse', () => {
  it('property: a NUL or a lone surrogate anywhere — value or key, any depth — is refused; clean JSON passes', () => {
    // eslint-disable-next-line no-control-regex -- matching NUL is the point
    const clean = fc.json({ depthSize: 'small' }).map((t) => JSON.parse(t) as unknown).filter((v) => !/\u0000|[\ud800-\udfff]/.test(JSON.stringify(v)));
    fc.assert(fc.property(clean, (v) => expect(unsafeBody(v)).toBeUndefined()));
    fc.assert(fc.property(clean, fc.constantFrom('a\u0000b', '\ud800', 'x\udfffy'), fc.boolean(), (v, bad, asKey) => {
      const body = { wrapper: [v, asKey ? { [bad]: 1 } : { field: bad }] };
      expect(unsafeBody(body)).toMatch(/NUL character or a lone surrogate/);
    }));
  });

  it('refuses nesting past the limit without recursion, and keeps a proper surrogate pair', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(unsafeBody(deep)).toMatch(/nests deeper/);
    let ok: unknown = 1;
    for (let i = 0; i < MAX_BODY_DEPTH - 1; i++) ok = [ok];
    expect(unsafeBody(ok)).toBeUndefined();
    expect(unsafeBody({ name: 'emoji \ud83d\ude00' })).toBeUndefined();
  });
});
