import fc from 'fast-check';
import { type FinanceCaller } from '../finance-access/finance-caller';
import { scopedFilter } from './finance-scope';

describe('finance scope of journal queries', () => {
  const limited: FinanceCaller = { role: 'finance', tokenId: 't', ownerId: 'o1' };

  it('property: an owner-limited token only ever queries its own owner, or is refused', () => {
    fc.assert(fc.property(fc.record({ ownerId: fc.option(fc.constantFrom('o1', 'o2'), { nil: undefined }), providerId: fc.option(fc.constant('p'), { nil: undefined }),
      account: fc.option(fc.constantFrom('owner:o1:available', 'owner:o2:available', 'platform:revenue'), { nil: undefined }) }, { requiredKeys: [] }), (f) => {
      const out = scopedFilter(limited, f);
      if (out !== 'forbidden') {
        expect(out.ownerId).toBe('o1');
        expect(out.providerId).toBeUndefined();
        if (out.account !== undefined) expect(out.account.startsWith('owner:o1:')).toBe(true);
      }
    }));
  });

  it('leaves unlimited and operator tokens as they asked', () => {
    for (const caller of [{ role: 'finance', tokenId: 't', ownerId: null }, { role: 'operator', tokenId: null }] as FinanceCaller[]) {
      expect(scopedFilter(caller, { providerId: 'p' })).toEqual({ providerId: 'p' });
    }
    expect(scopedFilter(limited, {})).toEqual({ ownerId: 'o1' });
    expect(scopedFilter(limited, { ownerId: 'o2' })).toBe('forbidden');
  });
});
