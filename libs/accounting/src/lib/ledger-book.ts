import { type Account, accountKey, type Money } from './accounts';

/** One side of a posting: `amount` is added to the account's balance (negative: taken from it). */
export interface Entry {
  account: string;
  asset: string;
  amount: bigint;
}

/** A balanced set of entries, applied all at once or not at all. Never edited; reversed only by a new posting. */
export interface Posting {
  id: string;
  kind: 'deposit' | 'hold' | 'post' | 'void' | 'payout';
  entries: Entry[];
}

export type HoldState = { holdId: string; ownerId: string; amount: Money; state: 'pending' | 'posted' | 'voided' };

export type Rejection =
  | 'INSUFFICIENT_FUNDS'
  | 'HOLD_UNKNOWN'
  | 'HOLD_ALREADY_RESOLVED'
  | 'AMOUNT_INVALID'
  | 'ASSET_MISMATCH'
  | 'DUPLICATE';

export type Outcome = { ok: true; postings: Posting[] } | { ok: false; reason: Rejection };

/** A take rate in basis points (1/100 of a percent): 1,000 is 10 %. */
export function splitFee(gross: bigint, feeBps: number): { fee: bigint; net: bigint } {
  if (!Number.isInteger(feeBps) || feeBps < 0 || feeBps > 10_000) throw new RangeError('feeBps must be a whole number from 0 to 10000');
  // Floor: the platform never rounds in its own favour by more than the minor unit's fraction.
  const fee = (gross * BigInt(feeBps)) / 10_000n;
  return { fee, net: gross - fee };
}

/**
 * The accounting rules as a pure state machine: balances per account and
 * asset, holds (pending transfers) and the postings that made them. Every
 * operation either applies balanced postings or is rejected leaving every
 * balance unchanged. A hold is posted (fully or partly, the rest released)
 * or voided, exactly once. No `available` balance goes below zero.
 */
export class LedgerBook {
  private readonly balances = new Map<string, bigint>();
  private readonly holds = new Map<string, HoldState>();
  private readonly seen = new Set<string>();
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
    return this.apply({ id: `deposit:${reference}`, kind: 'deposit', entries: [
      this.entry({ kind: 'external' }, amount, -1n), this.entry({ kind: 'available', ownerId }, amount, 1n),
    ] });
  }

  /** A pending transfer: available → held. */
  placeHold(holdId: string, ownerId: string, amount: Money): Outcome {
    if (amount.minor < 0n) return { ok: false, reason: 'AMOUNT_INVALID' };
    if (this.holds.has(holdId)) return { ok: false, reason: 'DUPLICATE' };
    if (this.balance({ kind: 'available', ownerId }, amount.asset) < amount.minor) return { ok: false, reason: 'INSUFFICIENT_FUNDS' };
    const out = this.apply({ id: `hold:${holdId}`, kind: 'hold', entries: [
      this.entry({ kind: 'available', ownerId }, amount, -1n), this.entry({ kind: 'held', ownerId }, amount, 1n),
    ] });
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
    const { fee, net } = splitFee(captured.minor, feeBps);
    const rest = h.amount.minor - captured.minor;
    const a = h.amount.asset;
    const entries = [
      { account: accountKey({ kind: 'held', ownerId: h.ownerId }), asset: a, amount: -h.amount.minor },
      { account: accountKey({ kind: 'payable', providerId }), asset: a, amount: net },
      { account: accountKey({ kind: 'revenue' }), asset: a, amount: fee },
      { account: accountKey({ kind: 'available', ownerId: h.ownerId }), asset: a, amount: rest },
    ].filter((e) => e.amount !== 0n);
    h.state = 'posted';
    return this.apply({ id: `post:${holdId}`, kind: 'post', entries });
  }

  /** Releases the whole hold back to available. */
  voidHold(holdId: string): Outcome {
    const h = this.holds.get(holdId);
    if (!h) return { ok: false, reason: 'HOLD_UNKNOWN' };
    if (h.state !== 'pending') return { ok: false, reason: 'HOLD_ALREADY_RESOLVED' };
    h.state = 'voided';
    return this.apply({ id: `void:${holdId}`, kind: 'void', entries: [
      this.entry({ kind: 'held', ownerId: h.ownerId }, h.amount, -1n), this.entry({ kind: 'available', ownerId: h.ownerId }, h.amount, 1n),
    ] });
  }

  /** Money out to a provider, from what the platform owes it. */
  payout(payoutId: string, providerId: string, amount: Money): Outcome {
    if (amount.minor <= 0n) return { ok: false, reason: 'AMOUNT_INVALID' };
    if (this.seen.has(`payout:${payoutId}`)) return { ok: false, reason: 'DUPLICATE' };
    if (this.balance({ kind: 'payable', providerId }, amount.asset) < amount.minor) return { ok: false, reason: 'INSUFFICIENT_FUNDS' };
    this.seen.add(`payout:${payoutId}`);
    return this.apply({ id: `payout:${payoutId}`, kind: 'payout', entries: [
      this.entry({ kind: 'payable', providerId }, amount, -1n), this.entry({ kind: 'external' }, amount, 1n),
    ] });
  }

  private entry(account: Account, amount: Money, sign: 1n | -1n): Entry {
    return { account: accountKey(account), asset: amount.asset, amount: sign * amount.minor };
  }

  private apply(p: Posting): Outcome {
    const perAsset = new Map<string, bigint>();
    for (const e of p.entries) perAsset.set(e.asset, (perAsset.get(e.asset) ?? 0n) + e.amount);
    for (const [asset, sum] of perAsset) if (sum !== 0n) throw new Error(`posting ${p.id} does not balance in ${asset}`);
    for (const e of p.entries) {
      const k = `${e.account}|${e.asset}`;
      this.balances.set(k, (this.balances.get(k) ?? 0n) + e.amount);
    }
    this.journal.push(p);
    return { ok: true, postings: [p] };
  }
}
