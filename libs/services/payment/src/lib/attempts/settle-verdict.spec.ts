import { type ChainVerdict } from '../x402/chain-state';
import { type SettleOutcome } from '../x402/x402.types';
import { saysNonceUsed, settleStep } from './settle-verdict';

/**
 * B (money never moved or refused on a claim): the verdict on an x402 payment is the chain's. Every combination of
 * what the facilitator said and what the chain shows, with the step the payment service takes.
 */
describe('settleStep: the chain decides, the facilitator only claims', () => {
  const valid = { validBefore: 2_000n, afterUnknown: false };
  const unused: ChainVerdict = { kind: 'unused', chainTime: 1_000n };
  const settled: SettleOutcome = { kind: 'settled', response: { success: true, transaction: '0xabc', network: 'eip155:84532' } };
  const nonceUsed: SettleOutcome = { kind: 'refused', reason: 'invalid_exact_evm_payload_authorization_nonce_used' };

  it('credits the transfer the chain shows, whatever the facilitator said — a refusal of a repeat included', () => {
    for (const settle of [settled, nonceUsed, { kind: 'unknown', problem: 'timed out' } as const, { kind: 'refused', reason: 'insufficient_funds' } as const, undefined]) {
      expect(settleStep({ kind: 'transferred', transaction: '0xchain' }, { ...valid, ...(settle ? { settle } : {}) })).toEqual({ kind: 'credit', transaction: '0xchain' });
    }
  });

  it('"nonce already used" with the nonce unused on the chain is never a refusal: no verdict yet', () => {
    expect(settleStep(unused, { ...valid, settle: nonceUsed })).toMatchObject({ kind: 'unknown', problem: expect.stringContaining('nonce unused') });
  });

  it('"settled" that the chain does not show is not credited', () => {
    expect(settleStep(unused, { ...valid, settle: settled })).toMatchObject({ kind: 'unknown' });
  });

  it('an unreadable chain leaves the attempt unknown, whatever was said', () => {
    for (const settle of [settled, nonceUsed, { kind: 'refused', reason: 'insufficient_funds' } as const]) {
      expect(settleStep({ kind: 'unreadable', problem: 'chain: 503' }, { ...valid, settle })).toEqual({ kind: 'unknown', problem: 'chain: 503' });
    }
  });

  it('a first settle refused with a stated reason, the chain agreeing nothing moved: refused, the nonce given back', () => {
    expect(settleStep(unused, { ...valid, settle: { kind: 'refused', reason: 'insufficient_funds' } })).toEqual({ kind: 'refuse', reason: 'insufficient_funds', releaseNonce: true });
  });

  it('after an unknown outcome a refusal is not believed while the authorization can still move money', () => {
    expect(settleStep(unused, { ...valid, afterUnknown: true, settle: { kind: 'refused', reason: 'insufficient_funds' } })).toMatchObject({ kind: 'unknown' });
  });

  it('an unused authorization past its validBefore (chain time) can never move: refused', () => {
    expect(settleStep({ kind: 'unused', chainTime: 2_000n }, { ...valid, afterUnknown: true })).toEqual({ kind: 'refuse', reason: 'authorization_expired', releaseNonce: true });
  });

  it('a nonce the payer cancelled: refused, and the nonce stays spent', () => {
    expect(settleStep({ kind: 'used-otherwise' }, { ...valid, settle: nonceUsed })).toEqual({ kind: 'refuse', reason: 'authorization_cancelled', releaseNonce: false });
  });

  it('before a repeat settle: an unused, valid authorization is sent to the facilitator again', () => {
    expect(settleStep(unused, { ...valid, afterUnknown: true })).toEqual({ kind: 'settle' });
  });

  it('knows the facilitators\' words for a used nonce', () => {
    for (const r of ['invalid_exact_evm_payload_authorization_nonce_used', 'nonce_already_used', 'authorization nonce already spent']) expect(saysNonceUsed(r)).toBe(true);
    for (const r of ['insufficient_funds', 'invalid_exact_evm_payload_signature', 'authorization_expired']) expect(saysNonceUsed(r)).toBe(false);
  });
});
