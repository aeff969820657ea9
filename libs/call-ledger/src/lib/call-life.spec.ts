import fc from 'fast-check';
import { contradictions, deriveCallStatus } from './call-life';

const happy = ['CallRequested', 'PaymentHeld', 'CallDispatched', 'ResultReceived', 'EffectConfirmed', 'CallSettled'];
const rejected = ['CallRequested', 'PaymentHeld', 'CallDispatched', 'ResultReceived', 'EffectRejected', 'CallRefunded'];

describe('call life (B4, C8): status from the set of facts', () => {
  it('walks the happy path one fact at a time', () => {
    const statuses = happy.map((_, i) => deriveCallStatus(happy.slice(0, i + 1)));
    expect(statuses).toEqual(['requested', 'held', 'dispatched', 'result_received', 'effect_confirmed', 'settled']);
  });

  it('is unaffected by arrival order and by redelivered duplicates (property)', () => {
    fc.assert(
      fc.property(fc.constantFrom(happy, rejected), fc.infiniteStream(fc.nat()), (life, seeds) => {
        const withDuplicates = life.flatMap((t) => (seeds.next().value % 3 === 0 ? [t, t] : [t]));
        const shuffled = fc.sample(fc.shuffledSubarray(withDuplicates, { minLength: withDuplicates.length, maxLength: withDuplicates.length }), 1)[0]!;
        expect(deriveCallStatus(shuffled)).toBe(deriveCallStatus(life));
        expect(contradictions(shuffled)).toEqual([]);
      }),
    );
  });

  it('never moves backwards as facts accumulate (property)', () => {
    const rank = ['requested', 'held', 'payment_rejected', 'dispatched', 'outcome_unknown', 'result_received', 'effect_rejected', 'effect_confirmed', 'refunded', 'settled'];
    fc.assert(
      fc.property(fc.shuffledSubarray(happy, { minLength: 1 }), (subset) => {
        const ordered = happy.filter((t) => subset.includes(t));
        let last = -1;
        for (let i = 1; i <= ordered.length; i++) {
          const r = rank.indexOf(deriveCallStatus(ordered.slice(0, i))!);
          expect(r).toBeGreaterThanOrEqual(last);
          last = r;
        }
      }),
    );
  });

  it('flags contradictory facts', () => {
    expect(contradictions(['CallSettled', 'CallRefunded'])).toContain('both settled and refunded');
    expect(contradictions(['PaymentRejected', 'CallDispatched'])).toHaveLength(1);
  });
});
