import fc from 'fast-check';
import { decimalAmount, decimalsOf, displayAmount } from './money';

/** Amounts as people read them, exactly (from the integer, never a float). */
describe('amounts for people', () => {
  it('shows minor units in the asset\'s decimals, with the asset', () => {
    expect(displayAmount(250_000n, 'USDC')).toBe('0.25 USDC');
    expect(displayAmount(100_000_000n, 'USDC')).toBe('100.00 USDC');
    expect(displayAmount(750n, 'USDC')).toBe('0.00075 USDC');
    expect(displayAmount(1_500n, 'EUR')).toBe('15.00 EUR');
    expect(decimalAmount(-1_050n, 'USD')).toBe('-10.50');
    expect(decimalAmount(0n, 'USDC')).toBe('0.00');
    expect(decimalsOf('XYZ')).toBe(6);
  });

  it('property: the decimal reads back to the same minor units', () => {
    fc.assert(fc.property(fc.bigInt({ min: -(10n ** 18n), max: 10n ** 18n }), fc.constantFrom('USDC', 'EUR', 'USD'), (minor, asset) => {
      const [whole, frac = ''] = decimalAmount(minor, asset).replace('-', '').split('.');
      const d = decimalsOf(asset);
      const back = BigInt(whole!) * 10n ** BigInt(d) + BigInt(frac.padEnd(d, '0').slice(0, d) || '0');
      return (minor < 0n ? -back : back) === minor;
    }));
  });
});
