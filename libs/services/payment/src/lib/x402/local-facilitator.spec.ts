import { testPayer } from '@tollgate/testing';
import { DEFAULT_X402 } from '../payment.options';
import { LocalFacilitator } from './local-facilitator';
import { requirementsFor } from './payment-required';
import { type PaymentPayload } from './x402.types';

/** G7: x402: the local facilitator verifies what a chain-backed one would before broadcasting. */
describe('LocalFacilitator (x402 exact scheme, EIP-3009 signatures)', () => {
  const facilitator = new LocalFacilitator();
  const req = requirementsFor(DEFAULT_X402, 1000n);
  const payer = testPayer();
  const sign = async (o: Parameters<typeof payer.sign>[1] = {}) => (await payer.sign(req, o)) as unknown as PaymentPayload;

  it('accepts a payment signed for the requirement, naming the payer, and settles it with a transaction id', async () => {
    const p = await sign();
    expect(await facilitator.verify(p, req)).toEqual({ kind: 'valid', payer: payer.address });
    expect(await facilitator.settle(p, req)).toMatchObject({ kind: 'settled', response: { success: true, payer: payer.address, network: 'eip155:84532', transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) } });
  });

  it('refuses an amount under the price, an expired or not yet valid authorization, and another network', async () => {
    expect(await facilitator.verify(await sign({ value: 999n }), req)).toEqual({ kind: 'invalid', reason: 'insufficient_amount' });
    const now = BigInt(Math.floor(Date.now() / 1000));
    expect(await facilitator.verify(await sign({ validBefore: now - 1n }), req)).toEqual({ kind: 'invalid', reason: 'authorization_expired' });
    expect(await facilitator.verify(await sign({ validAfter: now + 600n }), req)).toEqual({ kind: 'invalid', reason: 'authorization_not_yet_valid' });
    expect(await facilitator.verify(await sign({ network: 'eip155:1' }), req)).toEqual({ kind: 'invalid', reason: 'invalid_network' });
  });

  it('the exact scheme pays the price — a bigger signed value, or one beyond any bounded amount, is refused', async () => {
    expect(await facilitator.verify(await sign({ value: 1001n }), req)).toEqual({ kind: 'invalid', reason: 'amount_mismatch' });
    expect(await facilitator.verify(await sign({ value: 10n ** 12n }), req)).toEqual({ kind: 'invalid', reason: 'amount_mismatch' });
    expect(await facilitator.verify(await sign({ value: 2n ** 63n }), req)).toEqual({ kind: 'invalid', reason: 'amount_mismatch' });
    expect(await facilitator.settle(await sign({ value: 2n ** 255n }), req)).toMatchObject({ kind: 'refused' });
  });

  it('refuses a signature that does not recover to the payer, or a tampered amount', async () => {
    const p = await sign();
    const tampered = { ...p, payload: { ...p.payload, authorization: { ...p.payload.authorization, value: '5000' } } };
    expect(await facilitator.verify(tampered, req)).toEqual({ kind: 'invalid', reason: 'invalid_signature' });
    const other = testPayer();
    const stolen = { ...p, payload: { ...p.payload, authorization: { ...p.payload.authorization, from: other.address } } };
    expect(await facilitator.verify(stolen, req)).toEqual({ kind: 'invalid', reason: 'invalid_signature' });
    expect(await facilitator.verify({ ...p, payload: { ...p.payload, signature: 'nope' } }, req)).toEqual({ kind: 'invalid', reason: 'invalid_payload' });
  });

  it('refuses a payment to another recipient or for another token', async () => {
    const elsewhere = { ...req, payTo: '0x2222222222222222222222222222222222222222' };
    expect(await facilitator.verify(await sign(), elsewhere)).toEqual({ kind: 'invalid', reason: 'recipient_mismatch' });
  });
});
