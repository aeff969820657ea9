import fc from 'fast-check';
import { DEFAULT_X402 } from '../payment.options';
import { exactAmountProblem } from './exact-amount';
import { requirementsFor } from './payment-required';
import { type PaymentPayload } from './x402.types';

/** Whatever a facilitator says, only a payment of exactly the price is ever credited. */
describe('exactAmountProblem (x402 exact scheme)', () => {
  const withValue = (value: unknown) => ({ payload: { authorization: { value } } }) as unknown as PaymentPayload;

  it('accepts exactly the price and nothing else', () => {
    fc.assert(fc.property(fc.bigInt({ min: 1n, max: 10n ** 15n }), fc.bigInt({ min: 0n, max: 2n ** 256n }), (price, value) => {
      const problem = exactAmountProblem(withValue(value.toString()), requirementsFor(DEFAULT_X402, price));
      if (value === price) expect(problem).toBeUndefined();
      else expect(problem).toBe(value < price ? 'insufficient_amount' : 'amount_mismatch');
    }), { numRuns: 500 });
  });

  it('refuses a value that is not a decimal integer string', () => {
    const req = requirementsFor(DEFAULT_X402, 500n);
    for (const v of [500, '0500', '-500', '5e2', '', null, undefined, '1'.repeat(100)]) {
      expect(exactAmountProblem(withValue(v), req)).toBe('invalid_payload');
    }
    expect(exactAmountProblem({} as PaymentPayload, req)).toBe('invalid_payload');
  });
});
