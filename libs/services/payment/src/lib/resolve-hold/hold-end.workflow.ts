import { Inject, Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { accountKey, Movements, repaidOf, spendBuckets } from '@tollgate/accounting';
import { type CallState, isTerminal } from '@tollgate/call-life';
import { HoldReleased, money } from '@tollgate/contracts';
import { type CallWorkflow, type DecideInput, type Decision, type LifeChange, type OutboxWriter, type PostingEffect } from '@tollgate/messaging';
import { chargeBack } from '../place-hold/attempt-verdict';
import { evolveX402Attempt, type X402AttemptLife } from '../attempts/x402-attempt.model';
import { X402Attempts } from '../attempts/x402-attempts.repository';
import { type CounterIncrement, type EndingHold, Holds } from '../holds/holds.repository';
import { PAYMENT, PAYMENT_OUTBOX } from '../payment.constants';
import { AttemptsWake } from '../attempts/attempts-wake';

/** What the hold's row keeps of its end: what was captured (null: voided), counters to give back, an authorization's end. */
export interface HoldEnd {
  captured: bigint | null;
  uncount?: CounterIncrement[];
  /** Funded by an authorization (x402 upto, MPP authorize): its next life (captured for the charge, or released). */
  authorization?: X402AttemptLife;
}

/** After commit: an authorization's charge is left to collect, so the collection worker is woken. */
type Collect = 'collect';

/**
 * Payment's share of a call's end, run by the workflow runner (the route's `isTerminal` step): when the call's end
 * makes the model say it `isTerminal` and it was not before, a settled call's hold is captured for the settled amount
 * (never more than the hold: payment's half, held → clearing, any rest back to available) and a refunded call's hold
 * voided (held → available) — exactly once, since the end is folded into the hold's state it was decided from. Money
 * coming back repays a debt incurred meanwhile first (the owner's debt row is locked with the hold).
 */
@Injectable()
export class HoldEndWorkflow implements CallWorkflow<EndingHold, Collect, HoldEnd> {
  readonly name = 'payment.holds';
  readonly service = 'payment';
  readonly ledger = PAYMENT;
  readonly store;

  constructor(
    @Inject(PAYMENT_OUTBOX) readonly outbox: OutboxWriter,
    private readonly collection: AttemptsWake,
  ) {
    this.store = {
      lock: (m: EntityManager, ids: readonly string[]) => Holds.lockEnds(m, ids),
      save: (m: EntityManager, changes: readonly LifeChange<EndingHold, HoldEnd>[]) => this.save(m, changes),
    };
  }

  decide({ before, life }: DecideInput<EndingHold, undefined>): Decision<Collect, HoldEnd> {
    // A call payment never held, or whose end was already booked (a redelivery): nothing to do.
    if (!before || isTerminal(before.life) || !isTerminal(life)) return {};
    const end = life.settled ? capture(before, life, BigInt(life.settled.amount.amountMinor)) : voided(before);
    return before.paidBy && isAuthorization(life) ? withAuthorizationEnd(before, end) : end;
  }

  run(): void {
    this.collection.kick();
  }

  /** The hold's row at its end, the counters given back, and an authorization's next life. */
  private async save(m: EntityManager, changes: readonly LifeChange<EndingHold, HoldEnd>[]): Promise<void> {
    await Holds.saveEnds(m, changes.flatMap(({ before: hold, life, extra }) => (hold && extra ? [{ holdId: hold.holdId, life, captured: extra.captured }] : [])));
    for (const { before: hold, extra } of changes) {
      if (!hold || !extra) continue;
      if (extra.uncount) await Holds.uncount(m, hold.agentId, extra.uncount);
      if (extra.authorization) await X402Attempts.saveLife(m, hold.intentId, extra.authorization, { keepLease: false, retryInMs: 0, releaseNonce: false });
    }
  }
}

/**
 * An authorization ends with its call. Captured → the charge is left to collect (the attempt's next step, due now;
 * the collection is woken) and the unused rest, released to the wallet by the capture, is charged back: the payer never
 * pays it. Released → the whole authorization is charged back, nothing is ever collected. A redelivered end finds the
 * attempt past `authorized` and changes nothing.
 */
function withAuthorizationEnd(hold: EndingHold, end: Decision<Collect, HoldEnd>): Decision<Collect, HoldEnd> {
  const captured = end.extra!.captured;
  const paidBy = hold.paidBy!;
  const next = evolveX402Attempt(paidBy.life, captured === null ? { type: 'Released' } : { type: 'Captured', chargeMinor: captured });
  if (next === paidBy.life) return end;
  const reversed = paidBy.life.scheme === 'upto' || paidBy.life.scheme === 'mpp-authorize'
    ? chargeBack({ ownerId: hold.ownerId, reference: `x402-upto:${hold.intentId}:unused`, amountMinor: hold.amount - (captured ?? 0n), asset: hold.asset, intentId: hold.intentId },
      availableAfter(paidBy.available, end.postings ?? [], hold.ownerId, hold.asset))
    : {};
  return {
    ...end, postings: [...(end.postings ?? []), ...(reversed.postings ?? [])], announce: [...(end.announce ?? []), ...(reversed.announce ?? [])],
    extra: { ...end.extra!, authorization: next }, ...(next.step === 'collecting' ? { commands: ['collect'] } : {}),
  };
}

/** What is available once these postings are booked (the capture frees the unused rest, less a debt it repays). */
function availableAfter(available: bigint, postings: readonly PostingEffect[], ownerId: string, asset: string): bigint {
  const account = accountKey({ kind: 'available', ownerId });
  return postings.flatMap((p) => p.entries).filter((e) => e.account === account && e.asset === asset).reduce((sum, e) => sum + e.amount, available);
}

/** Captured for the settled amount, never more than the hold; a metered call's unused rest leaves the spend counters. */
function capture(hold: EndingHold, life: CallState, settledMinor: bigint): Decision<Collect, HoldEnd> {
  const captured = settledMinor > hold.amount ? hold.amount : settledMinor;
  const amount = { minor: hold.amount, asset: hold.asset };
  return {
    postings: [{ id: `capture:${hold.holdId}`, kind: 'capture', entries: Movements.capture(hold.ownerId, amount, captured, hold.owedMinor), intentId: hold.intentId }],
    announce: [released(hold, 'captured', captured, repaidOf(hold.owedMinor, hold.amount - captured))],
    extra: { captured, ...(captured < hold.amount && life.held?.metered ? { uncount: spendBuckets(hold.asset, hold.amount - captured, hold.createdAt) } : {}) },
  };
}

function voided(hold: EndingHold): Decision<Collect, HoldEnd> {
  return {
    postings: [{ id: `void:${hold.holdId}`, kind: 'void', entries: Movements.void(hold.ownerId, { minor: hold.amount, asset: hold.asset }, hold.owedMinor), intentId: hold.intentId }],
    announce: [released(hold, 'voided', 0n, repaidOf(hold.owedMinor, hold.amount))],
    extra: { captured: null },
  };
}

/** HoldReleased carries exactly what was booked, so the ledger's journal books the same entries. */
function released(hold: EndingHold, outcome: 'captured' | 'voided', captured: bigint, repaid: bigint) {
  return {
    event: HoldReleased,
    payload: {
      intentId: hold.intentId, holdId: hold.holdId, ownerId: hold.ownerId, outcome,
      held: money(hold.amount, hold.asset), captured: money(captured, hold.asset), repaidDebt: money(repaid, hold.asset),
    },
  };
}

function isAuthorization(life: CallState): boolean {
  return life.held?.x402PaymentResponse?.['scheme'] === 'upto' || life.held?.mppReceipt?.['intent'] === 'authorize';
}
