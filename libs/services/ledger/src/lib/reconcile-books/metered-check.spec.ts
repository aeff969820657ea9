/** The metered calls' reconciliation (G5.3): independent of the model, over lives generated from the route. */
import fc from 'fast-check';
import { arbitraryLife } from '@tollgate/call-life/testing';
import { checkMeteredCalls } from './metered-check';

const asFacts = (life: { intentId: string; events: { type: string; payload: object }[] }) => ({
  intentId: life.intentId, events: life.events.map((e) => ({ type: e.type, payload: e.payload as Record<string, unknown> })),
});

describe('checkMeteredCalls', () => {
  it('reconciles every life of the route (metered or not)', () => {
    fc.assert(fc.property(fc.array(arbitraryLife(), { maxLength: 20 }), (lives) => {
      expect(checkMeteredCalls(lives.map(asFacts)).problems).toEqual([]);
    }));
  });

  it('finds a charge off the rule, a charge past the hold and a hold ended twice', () => {
    const [life] = fc.sample(arbitraryLife(['confirmed']).filter((l) => l.events.some((e) => e.type === 'CallRequested' && 'metered' in e.payload)
      && BigInt((l.events.find((e) => e.type === 'PaymentHeld')!.payload as { amount: { amountMinor: string } }).amount.amountMinor) > 0n), 1);
    const facts = asFacts(life!);
    const settle = facts.events.find((e) => e.type === 'CallSettled')!;
    const hold = BigInt((facts.events.find((e) => e.type === 'PaymentHeld')!.payload as { amount: { amountMinor: string } }).amount.amountMinor);
    const off = { ...facts, events: facts.events.map((e) => (e === settle ? { ...e, payload: { ...e.payload, amount: { amountMinor: String(hold + 1n), asset: 'USDC' } } } : e)) };
    expect(checkMeteredCalls([off]).problems.map((p) => p.problem)).toEqual([expect.stringMatching(/^charged \d+, the rule gives \d+/), `charged ${hold + 1n}, more than the hold ${hold}`]);
    const twice = { ...facts, events: [...facts.events, { type: 'CallRefunded', payload: { intentId: facts.intentId, holdId: 'h', amount: { amountMinor: '1', asset: 'USDC' }, reason: 'x' } }] };
    expect(checkMeteredCalls([twice]).problems.map((p) => p.problem)).toEqual(['the hold ended 2 times']);
  });
});
