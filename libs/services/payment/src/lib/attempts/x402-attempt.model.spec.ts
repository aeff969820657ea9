import { decideVerify, evolveX402Attempt, eventOfSettleStep, isOpenX402Attempt, recordedX402Attempt, VERIFY_TRIES, type X402AttemptEvent } from './x402-attempt.model';

/** B (no money moved twice, none on a claim): an x402 attempt's life, folded and decided as pure functions. */
describe('x402 attempt: its own life', () => {
  const at = '2026-12-06T10:00:00.000Z';
  const later = '2026-12-06T10:05:00.000Z';
  const recorded = recordedX402Attempt('0xpayer');

  it('is verified once, settled or refused once: an event that does not apply leaves the same life', () => {
    const settling = evolveX402Attempt(recorded, { type: 'Verified', payer: '0xsigner' });
    expect(settling).toEqual({ step: 'settling', payer: '0xsigner' });
    expect(evolveX402Attempt(settling, { type: 'Verified', payer: '0xother' })).toBe(settling);
    const settled = evolveX402Attempt(settling, { type: 'Settled', transaction: '0xtx' });
    expect(settled).toMatchObject({ step: 'settled', transaction: '0xtx' });
    expect(isOpenX402Attempt(settled)).toBe(false);
    for (const e of [{ type: 'Refused', reason: 'late', releaseNonce: true }, { type: 'Settled', transaction: '0xtwice' },
      { type: 'VerdictAwaited', problem: 'x', settleUnknown: true, at }] as X402AttemptEvent[]) {
      expect(evolveX402Attempt(settled, e)).toBe(settled);
    }
  });

  it('keeps since when a settle is unknown (the first time), and only for a settle', () => {
    const verifyDown = evolveX402Attempt(recorded, { type: 'VerdictAwaited', problem: 'verify: down', settleUnknown: false, at });
    expect(verifyDown).toEqual({ ...recorded, problem: 'verify: down' });
    const first = evolveX402Attempt(verifyDown, { type: 'VerdictAwaited', problem: 'settle: timed out', settleUnknown: true, at });
    const second = evolveX402Attempt(first, { type: 'VerdictAwaited', problem: 'settle: still', settleUnknown: true, at: later });
    expect(second).toMatchObject({ unknownSince: at, problem: 'settle: still', step: 'verifying' });
  });

  it('decides verify: deadline and invalid refuse, "nonce used" asks the chain, an outage is retried then refused', () => {
    const base = { tries: 1, payer: '0xPayer', at };
    expect(decideVerify({ ...base })).toEqual({ event: { type: 'Refused', reason: 'call_deadline_passed', releaseNonce: true }, then: 'stop' });
    expect(decideVerify({ ...base, verify: { kind: 'invalid', reason: 'insufficient_funds' } }).event).toMatchObject({ type: 'Refused', reason: 'insufficient_funds' });
    expect(decideVerify({ ...base, verify: { kind: 'invalid', reason: 'invalid_exact_evm_payload_authorization_nonce_used' } }))
      .toEqual({ event: { type: 'Verified', payer: '0xpayer' }, then: 'ask-the-chain' });
    expect(decideVerify({ ...base, verify: { kind: 'valid', payer: '0xSigner' } })).toEqual({ event: { type: 'Verified', payer: '0xsigner' }, then: 'settle' });
    expect(decideVerify({ ...base, verify: { kind: 'unavailable', problem: 'down' } }).event).toMatchObject({ type: 'VerdictAwaited', settleUnknown: false });
    expect(decideVerify({ ...base, tries: VERIFY_TRIES, verify: { kind: 'unavailable', problem: 'down' } }).event)
      .toEqual({ type: 'Refused', reason: 'facilitator_unavailable', releaseNonce: true });
  });

  it('turns the chain\'s settle verdict into the attempt\'s event', () => {
    expect(eventOfSettleStep({ kind: 'credit', transaction: '0xtx' }, at)).toEqual({ type: 'Settled', transaction: '0xtx' });
    expect(eventOfSettleStep({ kind: 'refuse', reason: 'authorization_cancelled', releaseNonce: false }, at))
      .toEqual({ type: 'Refused', reason: 'authorization_cancelled', releaseNonce: false });
    expect(eventOfSettleStep({ kind: 'unknown', problem: 'rpc down' }, at)).toEqual({ type: 'VerdictAwaited', problem: 'rpc down', settleUnknown: true, at });
  });

  it('upto: authorized (no settle yet), then captured for the charge or released, once; 0 is collected at once', () => {
    const recordedUpto = recordedX402Attempt('0xpayer', 'upto');
    const authorized = evolveX402Attempt(recordedUpto, { type: 'Verified', payer: '0xsigner' });
    expect(authorized).toEqual({ step: 'authorized', payer: '0xsigner', scheme: 'upto' });
    expect(isOpenX402Attempt(authorized)).toBe(false);
    expect(decideVerify({ tries: 1, payer: '0xp', at, scheme: 'upto', verify: { kind: 'valid', payer: '0xP' } })).toEqual({ event: { type: 'Verified', payer: '0xp' }, then: 'stop' });
    // upto moves nothing at verify: "nonce used" means the authorization went elsewhere, and it is refused.
    expect(decideVerify({ tries: 1, payer: '0xp', at, scheme: 'upto', verify: { kind: 'invalid', reason: 'nonce already used' } }).event).toMatchObject({ type: 'Refused' });
    const collecting = evolveX402Attempt(authorized, { type: 'Captured', chargeMinor: 13_000n });
    expect(collecting).toMatchObject({ step: 'collecting', chargeMinor: '13000' });
    expect(isOpenX402Attempt(collecting)).toBe(true);
    expect(evolveX402Attempt(collecting, { type: 'Captured', chargeMinor: 99n })).toBe(collecting);
    expect(evolveX402Attempt(collecting, { type: 'Released' })).toBe(collecting);
    expect(evolveX402Attempt(collecting, { type: 'Settled', transaction: '0xtx' })).toMatchObject({ step: 'collected', transaction: '0xtx', chargeMinor: '13000' });
    expect(evolveX402Attempt(collecting, { type: 'Refused', reason: 'partial refused', releaseNonce: false })).toMatchObject({ step: 'uncollected', refusal: 'partial refused' });
    expect(evolveX402Attempt(authorized, { type: 'Captured', chargeMinor: 0n })).toMatchObject({ step: 'collected', chargeMinor: '0' });
    const released = evolveX402Attempt(authorized, { type: 'Released' });
    expect(released.step).toBe('released');
    expect(evolveX402Attempt(released, { type: 'Captured', chargeMinor: 1n })).toBe(released);
  });
});
