import fc from 'fast-check';
import { DEFAULT_X402 } from '../payment.options';
import { requirementsFor } from './payment-required';
import { uptoAuthorizationProblem } from './upto-authorization';
import { type PaymentPayload, type PaymentRequirements } from './x402.types';

const FACILITATOR = '0xfac1117470000000000000000000000000000fa1';
const upto = (max: bigint): PaymentRequirements => ({
  ...requirementsFor(DEFAULT_X402, max), scheme: 'upto', extra: { name: 'USDC', version: '2', assetCode: 'USDC', assetTransferMethod: 'permit2', facilitatorAddress: FACILITATOR },
});
const signed = (req: PaymentRequirements, o: { amount?: string; facilitator?: string; to?: string; scheme?: string; nonce?: string } = {}) => ({
  x402Version: 2, accepted: { ...req, scheme: o.scheme ?? 'upto' },
  payload: {
    signature: '0x01',
    permit2Authorization: {
      from: '0x2222222222222222222222222222222222222222', permitted: { token: req.asset, amount: o.amount ?? req.amount },
      spender: '0x4020A4f3b7b90ccA423B9fabCc0CE57C6C240002', nonce: o.nonce ?? '7', deadline: '9999999999',
      witness: { to: o.to ?? req.payTo, facilitator: o.facilitator ?? FACILITATOR, validAfter: '0' },
    },
  },
}) as unknown as PaymentPayload;

/** x402 upto, before any facilitator: exactly the maximum asked, signed to our facilitator and pay-to, or refused. */
describe('uptoAuthorizationProblem', () => {
  it('accepts a permit of exactly the maximum and refuses any other amount', () => {
    fc.assert(fc.property(fc.bigInt({ min: 1n, max: 10n ** 15n }), fc.bigInt({ min: 0n, max: 2n ** 200n }), (max, amount) => {
      const problem = uptoAuthorizationProblem(signed(upto(max), { amount: amount.toString() }), upto(max));
      if (amount === max) expect(problem).toBeUndefined();
      else expect(problem).toBe(amount < max ? 'insufficient_amount' : 'amount_mismatch');
    }), { numRuns: 300 });
  });

  it('refuses a permit another facilitator could settle, another recipient, the exact scheme, and a malformed one', () => {
    const req = upto(500n);
    expect(uptoAuthorizationProblem(signed(req, { facilitator: '0x3333333333333333333333333333333333333333' }), req)).toBe('facilitator_mismatch');
    expect(uptoAuthorizationProblem(signed(req, { to: '0x3333333333333333333333333333333333333333' }), req)).toBe('recipient_mismatch');
    expect(uptoAuthorizationProblem(signed(req, { scheme: 'exact' }), req)).toBe('unsupported_scheme');
    for (const nonce of ['-1', '0x10', '', '1'.repeat(90)]) expect(uptoAuthorizationProblem(signed(req, { nonce }), req)).toBe('invalid_payload');
    expect(uptoAuthorizationProblem({} as PaymentPayload, req)).toBe('invalid_payload');
    expect(uptoAuthorizationProblem(signed(req), { ...req, extra: { ...req.extra, facilitatorAddress: undefined } })).toBe('facilitator_mismatch');
  });
});
