import { type Account, accountKey, type Money } from './accounts';
import { type Entry, imbalance, Movements, splitFee } from './postings';

/** A balanced set of entries, applied all at once or not at all. Never edited; reversed only by a new posting. */
export interface Posting {
  id: string;
  kind: 'deposit' | 'chargeback' | 'hold' | 'capture' | 'settle' | 'void' | 'payout';
  entries: Entry[];
}

export type HoldState = { holdId: string; ownerId: string; amount: Money; state: 'pending' | 'captured' | 'voided' };

export type Rejection =
  | 'INSUFFICIENT_FUNDS'
  | 'HOLD_UNKNOWN'
  | 'HOLD_ALREADY_RESOLVED'
  | 'AMOUNT_INVALID'
  | 'ASSET_MISMATCH'
  | 'DUPLICATE';

export type Outcome = { ok: true; postings: Posting[] } | { ok: false; reason: Rejection };

/**
 * The accounting rules as a pure state machine: balances per account and
 * asset, holds (pending transfers) and the postings that made them. Every
 * operation either applies balanced postings or is rejected leaving every
 * balance unchanged. A hold is captured (fully or partly, the rest released)
 * or voided, exactly once. No `available` balance goes below zero.
 */
export class LedgerBook {
  private readonly balances = new Map<string, bigint>();
  private readonly holds = new Map<string, HoldState>();
  private readonly seen = new Set<string>();
  private readonly deposits = new Map<string, { ownerId: string; amount: Money }>();
  readonly journal: Posting[] = [];

  balance(account: Account, asset: string): bigint {
    return this.balances.get(`${accountKey(account)}|${asset}`) ?? 0n;
  }

  hold(holdId: string): HoldState | undefined {
    const h = this.holds.get(holdId);
    return h && { ...h };
  }

  /** Per asset, the sum of every balance: zero when every posting balanced. */
  totals(): Map<string, bigint> {
    const out = new Map<string, bigint>();
    for (const [key, v] of this.balances) {
      const asset = key.split('|')[1]!;
      out.set(asset, (out.get(asset) ?? 0n) + v);
    }
    return out;
  }

  /** Money in: the same external reference credits once. */
  deposit(reference: string, ownerId: string, amount: Money): Outcome {
    if (amount.minor <= 0n) return { ok: false, reason: 'AMOUNT_INVALID' };
    if (this.seen.has(`deposit:${reference}`)) return { ok: false, reason: 'DUPLICATE' };
    this.seen.add(`deposit:${reference}`);
    this.deposits.set(reference, { ownerId, amount });
    const owed = this.owed(ownerId, amount.asset);
    return this.apply({ id: `deposit:${reference}`, kind: 'deposit', entries: Movements.deposit(ownerId, amount, owed) });
  }

  /** A deposit reversed from outside, once: what is no longer available becomes the owner's debt. */
  chargeback(reference: string): Outcome {
    const d = this.deposits.get(reference);
    if (!d) return { ok: false, reason: 'HOLD_UNKNOWN' };
    if (this.seen.has(`chargeback:${reference}`)) return { ok: false, reason: 'DUPLICATE' };
    this.seen.add(`chargeback:${reference}`);
    const available = this.balance({ kind: 'available', ownerId: d.ownerId }, d.amount.asset);
    return this.apply({ id: `chargeback:${reference}`, kind: 'chargeback', entries: Movements.chargeback(d.ownerId, d.amount, available) });
  }

  /** A pending transfer: available → held. */
  placeHold(holdId: string, ownerId: string, amount: Money): Outcome {
    if (amount.minor < 0n) return { ok: false, reason: 'AMOUNT_INVALID' };
    if (this.holds.has(holdId)) return { ok: false, reason: 'DUPLICATE' };
    if (this.balance({ kind: 'available', ownerId }, amount.asset) < amount.minor) return { ok: false, reason: 'INSUFFICIENT_FUNDS' };
    const out = this.apply({ id: `hold:${holdId}`, kind: 'hold', entries: Movements.hold(ownerId, amount) });
    this.holds.set(holdId, { holdId, ownerId, amount, state: 'pending' });
    return out;
  }

  /** Posts `captured` (≤ the hold) to the provider less the platform fee; the rest goes back to available. */
  postHold(holdId: string, captured: Money, providerId: string, feeBps: number): Outcome {
    const h = this.holds.get(holdId);
    if (!h) return { ok: false, reason: 'HOLD_UNKNOWN' };
    if (h.state !== 'pending') return { ok: false, reason: 'HOLD_ALREADY_RESOLVED' };
    if (captured.asset !== h.amount.asset) return { ok: false, reason: 'ASSET_MISMATCH' };
    if (captured.minor < 0n || captured.minor > h.amount.minor) return { ok: false, reason: 'AMOUNT_INVALID' };
    const { fee } = splitFee(captured.minor, feeBps);
    h.state = 'captured';
    // Both halves of the capture (payment's, then settlement's): clearing is back to zero after them.
    return this.applyAll([
      { id: `capture:${holdId}`, kind: 'capture', entries: Movements.capture(h.ownerId, h.amount, captured.minor, this.owed(h.ownerId, h.amount.asset)) },
      { id: `settle:${holdId}`, kind: 'settle', entries: Movements.settle(providerId, captured, fee) },
    ]);
  }

  /** Releases the whole hold back to available. */
  voidHold(holdId: string): Outcome {
    const h = this.holds.get(holdId);
    if (!h) return { ok: false, reason: 'HOLD_UNKNOWN' };
    if (h.state !== 'pending') return { ok: false, reason: 'HOLD_ALREADY_RESOLVED' };
    h.state = 'voided';
    return this.apply({ id: `void:${holdId}`, kind: 'void', entries: Movements.void(h.ownerId, h.amount, this.owed(h.ownerId, h.amount.asset)) });
  }

  /** Money out to a provider, from what the platform owes it. */
  payout(payoutId: string, providerId: string, amount: Money): Outcome {
    if (amount.minor <= 0n) return { ok: false, reason: 'AMOUNT_INVALID' };
    if (this.seen.has(`payout:${payoutId}`)) return { ok: false, reason: 'DUPLICATE' };
    if (this.balance({ kind: 'payable', providerId }, amount.asset) < amount.minor) return { ok: false, reason: 'INSUFFICIENT_FUNDS' };
    this.seen.add(`payout:${payoutId}`);
    return this.apply({ id: `payout:${payoutId}`, kind: 'payout', entries: Movements.payout(providerId, amount) });
  }

  /** What an owner owes the platform, as a positive amount. */
  private owed(ownerId: string, asset: string): bigint {
    return -this.balance({ kind: 'debt', ownerId }, asset);
  }

  private apply(p: Posting): Outcome {
    for (const [asset] of imbalance(p.entries)) throw new Error(`posting ${p.id} does not balance in ${asset}`);
    for (const e of p.entries) {
      const k = `${e.account}|${e.asset}`;
      this.balances.set(k, (this.balances.get(k) ?? 0n) + e.amount);
    }
    this.journal.push(p);
    return { ok: true, postings: [p] };
  }

  private applyAll(ps: Posting[]): Outcome {
    for (const p of ps) this.apply(p);
    return { ok: true, postings: ps };
  }
}
