import fc from 'fast-check';
import { arbitraryDelivery, arbitraryLife, lifeOf, prefixes } from '../testing';
import { failedToRun } from './attempts';
import { type CallEvent } from './call-event';
import { foldCall, initialState, evolve } from './call-state';
import {
  ANSWER_RETENTION_MS, contradictions, failureOf, isAnswered, isConfirmed, isReconciling, isRefundDue, isSettlementDue, isTerminal, mayRetryUnderSameKey,
  providerOf, readyToDispatch, receiptOf, repeatVerdict, status, type CallStatus,
} from './decisions';

/** Status order along the route: a status never moves back to an earlier one. */
const RANK: Record<CallStatus, number> = {
  requested: 0, held: 1, payment_rejected: 1, dispatched: 2, outcome_unknown: 3, result_received: 4, effect_rejected: 5, effect_confirmed: 5, settled: 6, refunded: 6,
};

const shape = { intentId: '00000000-0000-4000-8000-000000000001', holdId: '00000000-0000-4000-8000-000000000002', priceMinor: 250, free: false, fallbacks: 0, final: false };

describe('call life (B4, C8): one evolve over every call event', () => {
  it('walks the happy path one fact at a time', () => {
    const life = lifeOf({ ...shape, branch: 'confirmed' });
    const statuses = prefixes(life.events).map((events) => status(foldCall(life.intentId, events)));
    expect(statuses).toEqual(['requested', 'held', 'dispatched', 'result_received', 'effect_confirmed', 'settled']);
  });

  it('any order or duplication of a life\'s events gives the same state (property)', () => {
    fc.assert(fc.property(arbitraryLife().chain((life) => fc.tuple(fc.constant(life), arbitraryDelivery(life))), ([life, delivered]) => {
      expect(foldCall(life.intentId, delivered)).toEqual(foldCall(life.intentId, life.events));
    }), { numRuns: 300 });
  });

  it('two different facts for one slot give the same state in either order: a later fact never overwrites a filled slot (property)', () => {
    // Two lives of one call that disagree (another price, provider, usage, result…): every event of one is a different
    // fact for the same slot as the other's. Whichever arrives first, the state is the same join of the two.
    const sameCall = (events: readonly CallEvent[], intentId: string) => events.map((e) => ({ ...e, payload: { ...e.payload, intentId } }) as CallEvent);
    const two = fc.tuple(arbitraryLife(), arbitraryLife()).map(([a, b]) => [a, { events: sameCall(b.events, a.intentId) }] as const);
    fc.assert(fc.property(two, ([a, b]) => {
      const pairs = a.events.flatMap((x) => b.events.filter((y) => y.type === x.type).map((y) => [x, y] as const));
      for (const [x, y] of pairs) {
        const base = foldCall(a.intentId, a.events.filter((e) => e !== x));
        expect(evolve(evolve(base, x), y)).toEqual(evolve(evolve(base, y), x));
      }
    }), { numRuns: 200 });
  });

  it('every life reaches exactly one terminal status, with no contradiction (property)', () => {
    fc.assert(fc.property(arbitraryLife(), (life) => {
      const end = foldCall(life.intentId, life.events);
      expect(status(end)).toBe(life.terminal);
      expect(isTerminal(end)).toBe(true);
      expect(contradictions(end)).toEqual([]);
      // Terminal only at the end: no prefix short of the whole life is terminal.
      expect(prefixes(life.events).slice(0, -1).filter((p) => isTerminal(foldCall(life.intentId, p)))).toEqual([]);
    }), { numRuns: 300 });
  });

  it('status never moves back along the route (property)', () => {
    fc.assert(fc.property(arbitraryLife(), (life) => {
      const ranks = prefixes(life.events).map((p) => RANK[status(foldCall(life.intentId, p))!]);
      expect(ranks).toEqual([...ranks].sort((a, b) => a - b));
    }), { numRuns: 300 });
  });

  it('an event of another call changes nothing', () => {
    const life = lifeOf({ ...shape, branch: 'confirmed' });
    const other = lifeOf({ ...shape, intentId: '00000000-0000-4000-8000-0000000000ff', branch: 'rejected' });
    expect(foldCall(life.intentId, [...life.events, ...other.events])).toEqual(foldCall(life.intentId, life.events));
  });
});

describe('the decisions every service asks', () => {
  const at = (branch: Parameters<typeof lifeOf>[0]['branch'], upTo: number, extra: Partial<typeof shape> = {}) => {
    const life = lifeOf({ ...shape, ...extra, branch });
    return foldCall(life.intentId, life.events.slice(0, upTo));
  };

  it('execution dispatches once the call is held and never twice', () => {
    expect(readyToDispatch(at('confirmed', 1))).toBe(false);
    expect(readyToDispatch(at('confirmed', 2))).toBe(true);
    expect(readyToDispatch(at('confirmed', 3))).toBe(false);
    expect(readyToDispatch(at('payment_refused', 2))).toBe(false);
    expect(readyToDispatch(at('refused_before_dispatch', 3))).toBe(false);
  });

  it('the agent is answered with the confirmed result only once the hold is known; a fallback counts its attempts', () => {
    const life = lifeOf({ ...shape, fallbacks: 2, branch: 'confirmed' });
    const [requested, held, ...rest] = life.events;
    const withoutHold = foldCall(life.intentId, [requested!, ...rest.slice(0, -1)]);
    expect(isConfirmed(withoutHold)).toBe(true);
    expect(isAnswered(withoutHold)).toBe(false);
    const answered = evolve(withoutHold, held!);
    expect(isAnswered(answered)).toBe(true);
    expect(receiptOf(answered)).toMatchObject({ status: 'VERIFYING', attempts: 3, fellBack: true, providerId: 'provider-3', classification: 'ok', heldMinor: 250n, chargedMinor: 0n });
    expect(receiptOf(foldCall(life.intentId, life.events))).toMatchObject({ status: 'SETTLED', heldMinor: 0n, chargedMinor: 250n });
  });

  it('a receipt shows the captured amount even when the settlement is recorded before the hold', () => {
    const life = lifeOf({ ...shape, branch: 'confirmed' });
    const state = foldCall(life.intentId, life.events.filter((e) => e.type !== 'PaymentHeld'));
    expect(receiptOf(state)).toMatchObject({ status: 'SETTLED', chargedMinor: 250n });
  });

  it('payment refusals answer at once, keep their next-step fields and free the key unless final', () => {
    const refused = at('payment_refused', 2);
    expect(failureOf(refused)).toMatchObject({ code: 'PAYMENT_INSUFFICIENT_FUNDS', stage: 'payment', retryable: true });
    expect(isAnswered(refused)).toBe(true);
    expect(mayRetryUnderSameKey(refused)).toBe(true);
    expect(mayRetryUnderSameKey(at('payment_refused', 2, { final: true }))).toBe(false);
    expect(mayRetryUnderSameKey(at('confirmed', 6))).toBe(false);
  });

  it('failed to run: the provider or the platform could not run it — not a payment refusal, a confirmation or a reconciliation', () => {
    expect(failedToRun(at('refused_before_dispatch', 3))).toBe(true);
    expect(failedToRun(at('unknown_then_rejected', 5))).toBe(true);
    // The provider answered, wrongly (a contract violation): its answer is the answer, not a failure to run.
    expect(failedToRun(at('rejected', 5))).toBe(false);
    // A fallback's provider_error (performed nothing) before a confirmed attempt: confirmed, not failed.
    expect(failedToRun(at('confirmed', 6, { fallbacks: 1 }))).toBe(false);
    expect(failedToRun(at('payment_refused', 2))).toBe(false);
    expect(failedToRun(at('confirmed', 6))).toBe(false);
    expect(failedToRun(at('unknown_then_confirmed', 4))).toBe(false);
    expect(failedToRun(at('confirmed', 3))).toBe(false);
  });

  it('an unknown outcome is being reconciled until its verdict; the verdict replaces it', () => {
    const unknown = at('unknown_then_confirmed', 4);
    expect(status(unknown)).toBe('outcome_unknown');
    expect(failureOf(unknown)?.code).toBe('IDEMPOTENCY_RESULT_UNAVAILABLE');
    expect(isReconciling(unknown)).toBe(true);
    const created = new Date('2026-12-04T09:00:00Z');
    expect(repeatVerdict(unknown, { createdAt: created, answerExpired: false }, created.getTime() + 1000)).toBe('stalled');
    const verdict = at('unknown_then_confirmed', 6);
    expect(isReconciling(verdict)).toBe(false);
    expect(repeatVerdict(verdict, { createdAt: created, answerExpired: false }, created.getTime() + 1000)).toBe('replay');
    expect(failureOf(at('unknown_then_rejected', 5))?.code).toBe('PROVIDER_CONTRACT_VIOLATION');
  });

  it('a repeat is in progress while unanswered, and unavailable once the answer is erased or past retention', () => {
    const created = new Date('2026-12-04T09:00:00Z');
    expect(repeatVerdict(at('confirmed', 3), { createdAt: created, answerExpired: false }, created.getTime())).toBe('in_progress');
    expect(repeatVerdict(at('confirmed', 6), { createdAt: created, answerExpired: true }, created.getTime())).toBe('unavailable');
    expect(repeatVerdict(at('confirmed', 6), { createdAt: created, answerExpired: false }, created.getTime() + 8 * 86_400_000)).toBe('unavailable');
  });

  it('a repeat within retention is replayed once answered (stalled while reconciling), in progress before, never run again (property)', () => {
    fc.assert(fc.property(arbitraryLife(), fc.integer({ min: 0, max: ANSWER_RETENTION_MS }), (life, age) => {
      const created = new Date(1_800_000_000_000);
      for (const events of prefixes(life.events)) {
        const state = foldCall(life.intentId, events);
        const expected = isReconciling(state) ? 'stalled' : isAnswered(state) ? 'replay' : 'in_progress';
        expect(repeatVerdict(state, { createdAt: created, answerExpired: false }, created.getTime() + age)).toBe(expected);
      }
      expect(repeatVerdict(foldCall(life.intentId, life.events), { createdAt: created, answerExpired: false }, created.getTime() + age)).toBe('replay');
    }), { numRuns: 200 });
  });

  it('settlement pays the confirmed attempt\'s provider, refunds a rejected effect, and never both', () => {
    const confirmed = at('confirmed', 7, { fallbacks: 1 });
    expect(isSettlementDue(confirmed)).toBe(true);
    expect(providerOf(confirmed)).toBe('provider-2');
    expect(isRefundDue(confirmed)).toBe(false);
    const rejected = at('rejected', 5);
    expect(isRefundDue(rejected)).toBe(true);
    expect(isSettlementDue(rejected)).toBe(false);
    expect(isSettlementDue(at('confirmed', 6))).toBe(false);
    expect(isRefundDue(at('refused_before_dispatch', 3))).toBe(true);
  });

  it('names contradictions: settled and refunded, a refused payment that was held', () => {
    const life = lifeOf({ ...shape, branch: 'confirmed' });
    const refund = lifeOf({ ...shape, branch: 'rejected' }).events.at(-1)!;
    expect(contradictions(foldCall(life.intentId, [...life.events, refund]))).toContain('both settled and refunded');
    const refused = lifeOf({ ...shape, branch: 'payment_refused' }).events[1]!;
    expect(contradictions(foldCall(life.intentId, [...life.events, refused]))).toContain('payment rejected but held or dispatched');
    expect(initialState('x').attempts).toEqual({});
  });
});
