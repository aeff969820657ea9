/**
 * G5.3, G5.4 — the charge rule of a metered call, property-tested over lives generated from the route: the charge is
 * never more than the hold, charge + released = hold (conservation per asset), the hold is resolved once, and the
 * model's charge is the one the route's settlement carries, whatever order or duplication the events arrive in.
 */
import fc from 'fast-check';
import { arbitraryDelivery, arbitraryLife, expectedCharge } from '../testing';
import { foldCall } from './call-state';
import { chargeOf, meteredCharge } from './metering';

const CONFIRMED = ['confirmed', 'unknown_then_confirmed'] as const;

describe('the metered charge rule', () => {
  it('is min(max(units × price, minimum), hold) for a usable report, min(minimum, hold) otherwise; never past the hold', () => {
    fc.assert(fc.property(
      fc.bigInt({ min: 0n, max: 10n ** 15n }), fc.bigInt({ min: 0n, max: 10n ** 6n }), fc.bigInt({ min: 0n, max: 10n ** 15n }),
      fc.option(fc.bigInt({ min: 0n, max: 10n ** 9n }), { nil: undefined }),
      (hold, unitPrice, minimum, units) => {
        const price = { unit: 'row', unitPriceMinor: unitPrice.toString(), minimumMinor: minimum.toString() };
        const { chargedMinor, flag } = meteredCharge(hold, price, units === undefined ? { problem: 'malformed' } : { units: units.toString() });
        const expected = expectedCharge(hold, { unitPriceMinor: Number(unitPrice), minimumMinor: Number(minimum), report: units === undefined ? { problem: 'malformed' } : { units: Number(units) } });
        expect(chargedMinor).toBe(expected);
        expect(chargedMinor >= 0n && chargedMinor <= hold).toBe(true);
        expect(flag === 'over_max').toBe(units !== undefined && units * unitPrice > hold);
      },
    ), { numRuns: 2000 });
  });

  it('over every confirmed life of the route: the settled amount, ≤ the hold, charge + released = hold, in any delivery', () => {
    fc.assert(fc.property(arbitraryLife(CONFIRMED).chain((life) => fc.tuple(fc.constant(life), arbitraryDelivery(life))), ([life, delivered]) => {
      const before = delivered.filter((e) => e.type !== 'CallSettled');
      const state = foldCall(life.intentId, before);
      const charge = chargeOf(state)!;
      const settled = life.events.find((e) => e.type === 'CallSettled')!;
      if (settled.type !== 'CallSettled') throw new Error('no settlement');
      const hold = BigInt(state.held!.amount.amountMinor);
      expect(charge.amount).toEqual(settled.payload.amount);
      expect(BigInt(charge.amount.amountMinor) <= hold).toBe(true);
      expect(BigInt(charge.amount.amountMinor) + BigInt(charge.released.amountMinor)).toBe(hold);
      expect(charge.amount.asset).toBe(charge.released.asset);
    }), { numRuns: 500 });
  });

  it('resolves every hold exactly once: settled or refunded, never both', () => {
    fc.assert(fc.property(arbitraryLife().chain((life) => fc.tuple(fc.constant(life), arbitraryDelivery(life))), ([life, delivered]) => {
      const state = foldCall(life.intentId, delivered);
      if (!state.held) return;
      expect([state.settled !== undefined, state.refunded !== undefined].filter(Boolean)).toHaveLength(1);
      expect(chargeOf(state) === undefined).toBe(life.terminal === 'refunded');
    }), { numRuns: 500 });
  });

  it('a fixed price is charged its whole hold; a metered one without a confirmed effect has no charge', () => {
    const life = foldCall('i', []);
    expect(chargeOf(life)).toBeUndefined();
  });
});
