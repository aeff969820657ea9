import { type Account, accountKey, type Money } from './accounts';

/** One side of a posting: `amount` is added to the account's balance (negative: taken from it). */
export interface Entry {
  account: string;
  asset: string;
  amount: bigint;
}

/**
 * The entries of every kind of movement, in one place: the in-memory book
 * (LedgerBook), the payment and settlement services (which apply them to
 * PostgreSQL) and the ledger projection all build their postings here, so the
 * three can never disagree on what a movement does.
 *
 * A capture is booked in two halves, one per service that owns the accounts:
 * payment moves the hold into `clearing` (and releases any rest), settlement
 * moves `clearing` into the provider's payable and the platform's revenue.
 * Once both halves are applied, clearing is back to zero.
 */
export const Movements = {
  /** Money in from outside: external → first what the owner owes (`owed` ≥ 0), the rest to available. */
  deposit(ownerId: string, amount: Money, owed = 0n): Entry[] {
    const repaid = repaidOf(owed, amount.minor);
    return nonZero([
      { account: accountKey({ kind: 'external' }), asset: amount.asset, amount: -amount.minor },
      { account: accountKey({ kind: 'debt', ownerId }), asset: amount.asset, amount: repaid },
      { account: accountKey({ kind: 'available', ownerId }), asset: amount.asset, amount: amount.minor - repaid },
    ]);
  },

  /** A deposit reversed from outside (a chargeback): taken from available as far as it goes; the shortfall becomes debt. */
  chargeback(ownerId: string, amount: Money, available: bigint): Entry[] {
    const fromAvailable = available < amount.minor ? available : amount.minor;
    return nonZero([
      { account: accountKey({ kind: 'external' }), asset: amount.asset, amount: amount.minor },
      { account: accountKey({ kind: 'available', ownerId }), asset: amount.asset, amount: -fromAvailable },
      { account: accountKey({ kind: 'debt', ownerId }), asset: amount.asset, amount: -(amount.minor - fromAvailable) },
    ]);
  },

  /** A pending transfer: available → held. */
  hold(ownerId: string, amount: Money): Entry[] {
    return pair({ kind: 'available', ownerId }, { kind: 'held', ownerId }, amount);
  },

  /** Releases a whole hold: held → what the owner owes first (`owed` ≥ 0, a debt incurred meanwhile), the rest to available. */
  void(ownerId: string, held: Money, owed = 0n): Entry[] {
    return nonZero([{ account: accountKey({ kind: 'held', ownerId }), asset: held.asset, amount: -held.minor }, ...release(ownerId, held.asset, held.minor, owed)]);
  },

  /** Payment's half of a capture: the hold leaves `held`; `captured` goes to clearing, the rest is released as by `void`. */
  capture(ownerId: string, held: Money, captured: bigint, owed = 0n): Entry[] {
    const a = held.asset;
    return nonZero([
      { account: accountKey({ kind: 'held', ownerId }), asset: a, amount: -held.minor },
      { account: accountKey({ kind: 'clearing' }), asset: a, amount: captured },
      ...release(ownerId, a, held.minor - captured, owed),
    ]);
  },

  /** Settlement's half of a capture: clearing → the provider's payable (net) and the platform's revenue (fee). */
  settle(providerId: string, captured: Money, fee: bigint): Entry[] {
    const a = captured.asset;
    return nonZero([
      { account: accountKey({ kind: 'clearing' }), asset: a, amount: -captured.minor },
      { account: accountKey({ kind: 'payable', providerId }), asset: a, amount: captured.minor - fee },
      { account: accountKey({ kind: 'revenue' }), asset: a, amount: fee },
    ]);
  },

  /** Money out to a provider: payable → external. */
  payout(providerId: string, amount: Money): Entry[] {
    return pair({ kind: 'payable', providerId }, { kind: 'external' }, amount);
  },
};

/** How much of `amount` coming to an owner goes to what it owes (`owed` ≥ 0): debts are repaid first. */
export function repaidOf(owed: bigint, amount: bigint): bigint {
  if (owed <= 0n || amount <= 0n) return 0n;
  return owed < amount ? owed : amount;
}

/** Per asset, the entries' sum: every value is zero for a balanced posting. */
export function imbalance(entries: readonly Entry[]): Map<string, bigint> {
  const out = new Map<string, bigint>();
  for (const e of entries) out.set(e.asset, (out.get(e.asset) ?? 0n) + e.amount);
  for (const [asset, sum] of out) if (sum === 0n) out.delete(asset);
  return out;
}

/** A take rate in basis points (1/100 of a percent): 1,000 is 10 %. */
export function splitFee(gross: bigint, feeBps: number): { fee: bigint; net: bigint } {
  if (!Number.isInteger(feeBps) || feeBps < 0 || feeBps > 10_000) throw new RangeError('feeBps must be a whole number from 0 to 10000');
  // Floor: the platform never rounds in its own favour by more than the minor unit's fraction.
  const fee = (gross * BigInt(feeBps)) / 10_000n;
  return { fee, net: gross - fee };
}

/** Money coming back to an owner repays its debt first; a debt and an available balance never coexist. */
function release(ownerId: string, asset: string, amount: bigint, owed: bigint): Entry[] {
  const repaid = repaidOf(owed, amount);
  return [
    { account: accountKey({ kind: 'debt', ownerId }), asset, amount: repaid },
    { account: accountKey({ kind: 'available', ownerId }), asset, amount: amount - repaid },
  ];
}

function pair(from: Account, to: Account, amount: Money): Entry[] {
  return [
    { account: accountKey(from), asset: amount.asset, amount: -amount.minor },
    { account: accountKey(to), asset: amount.asset, amount: amount.minor },
  ];
}

function nonZero(entries: Entry[]): Entry[] {
  return entries.filter((e) => e.amount !== 0n);
}
