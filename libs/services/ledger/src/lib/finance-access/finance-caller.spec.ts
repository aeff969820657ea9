import { type FinanceCaller, mayReadAll, mayReadOwner, visibleDetails } from './finance-caller';

/** What each kind of finance caller may read. */
describe('finance caller scope', () => {
  const operator: FinanceCaller = { role: 'operator', tokenId: null };
  const finance: FinanceCaller = { role: 'finance', tokenId: 't1', ownerId: null };
  const scoped: FinanceCaller = { role: 'finance', tokenId: 't2', ownerId: 'owner-a' };

  it('an owner-scoped token reads its owner only; unscoped finance and operators read everything', () => {
    expect(mayReadOwner(scoped, 'owner-a')).toBe(true);
    expect(mayReadOwner(scoped, 'owner-b')).toBe(false);
    expect(mayReadOwner(scoped, '')).toBe(false);
    expect(mayReadAll(scoped)).toBe(false);
    for (const c of [operator, finance]) {
      expect(mayReadOwner(c, 'owner-b')).toBe(true);
      expect(mayReadAll(c)).toBe(true);
    }
  });

  it('finance views leave out operation keys and signed x402 payments; operators see them', () => {
    const details = { intentId: 'i', operationKey: 'k', x402Payment: { payload: { signature: '0xsig' } }, price: { amountMinor: '5', asset: 'USDC' } };
    expect(visibleDetails(finance, details)).toEqual({ intentId: 'i', price: { amountMinor: '5', asset: 'USDC' } });
    expect(visibleDetails(scoped, details)).not.toHaveProperty('x402Payment');
    expect(visibleDetails(operator, details)).toEqual(details);
  });
});
