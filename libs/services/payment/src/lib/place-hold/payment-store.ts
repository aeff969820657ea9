import { type EntityManager } from 'typeorm';
import { type CallState, initialState } from '@tollgate/call-life';
import { type LifeChange, LostRace } from '@tollgate/messaging';
import { Approvals } from '../approve-call/approvals.repository';
import { type PayingCall, X402Attempts, type X402AttemptRow } from '../attempts/x402-attempts.repository';
import { Deposits } from '../fund-wallet/deposits.repository';
import { Holds } from '../holds/holds.repository';
import { MppReplays } from '../mpp/mpp-replay.repository';
import { type PaymentWrites } from './hold-plan';

/** A call payment decided before (held, refused, or paying by an outside rail), as the runner loads it. */
export interface DecidedCall {
  /** The hold's state when held (the bare call otherwise). */
  life: CallState;
  /** Its outside payment, locked with the owner's wallet (what a verdict books reads them) — also after the hold (upto's collection). */
  paying?: PayingCall;
  /** Due work: an attempt whose next step is due, claimed. */
  due?: X402AttemptRow;
}

/** Payment's store for the runner: the calls it decided (`payment.charge`, `hold`, `x402_attempt`) and each part of a decision to its table. */
export const PaymentStore = {
  /** The calls payment decided, with the outside payments among them locked with their owners' wallets. */
  async lock(m: EntityManager, ids: readonly string[]): Promise<Map<string, DecidedCall>> {
    const decided = await Holds.decided(m, ids);
    const paying = [...decided].filter(([, d]) => d.paying).map(([id]) => id);
    const locked = paying.length > 0 ? await X402Attempts.lockPaying(m, paying) : new Map<string, PayingCall>();
    return new Map([...decided].map(([id, d]) => {
      const p = locked.get(id);
      return [id, { life: d.life ?? initialState(id), ...(p ? { paying: p } : {}) }];
    }));
  },

  /** Outside payments whose next step is due, claimed (other instances skip them). */
  async claimDue(m: EntityManager, limit: number): Promise<DecidedCall[]> {
    return (await X402Attempts.claimDue(m, limit)).map((due) => ({ life: initialState(due.intent_id), due }));
  },

  /** Each part of what payment decided, to its table (the runner wrote the postings and events). */
  async save(m: EntityManager, changes: readonly LifeChange<DecidedCall, PaymentWrites>[]): Promise<void> {
    const leased = changes.filter((c) => c.extra?.leased);
    if (leased.length > 0) await X402Attempts.lease(m, leased.map((c) => c.intentId), leased[0]!.extra!.leased!.leaseMs);
    for (const { intentId, life, extra: x } of changes) {
      if (!x) continue;
      if (x.deposit && !(await Deposits.record(m, x.deposit)).fresh) throw new Error(`the outside payment of ${intentId} was credited before under ${x.deposit.reference}`);
      if (x.attempt) await X402Attempts.saveLife(m, intentId, x.attempt.life, x.attempt);
      if (x.attempt?.releaseClaim) await MppReplays.delete(m, x.attempt.releaseClaim);
      if (x.held) await Holds.place(m, { holdId: x.held.holdId, life, charge: x.held.charge, counters: x.held.counters, ...(x.held.approvalUsed ? { approvalUsed: x.held.approvalUsed } : {}) });
      if (x.refused) await Holds.recordRefusal(m, x.refused.charge);
      if (x.refused?.openApproval) await Approvals.openRequest(m, x.refused.openApproval.approvalId, x.refused.openApproval.request);
      if (x.paying) await recordAttempt(m, x.paying);
    }
  },
};

/** The outside payment's claim and attempt: read unused before the decision, so losing either is a race lost (retried). */
async function recordAttempt(m: EntityManager, paying: NonNullable<PaymentWrites['paying']>): Promise<void> {
  if (paying.claim && !(await MppReplays.tryClaim(m, paying.claim.key, paying.claim.expires))) throw new LostRace(`the MPP credential of ${paying.attempt.intent_id} was claimed by another call meanwhile`);
  if (!(await X402Attempts.record(m, paying.attempt))) throw new LostRace(`the payment nonce of ${paying.attempt.intent_id} was spent by another call meanwhile`);
}
