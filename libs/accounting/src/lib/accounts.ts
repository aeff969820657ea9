/**
 * The named accounts of the double-entry ledger. Every movement of
 * money is a balanced posting between them; the external account stands for
 * money entering (deposits) or leaving (payouts) the platform.
 * Accounts that may never go below zero: see `mayGoNegative`.
 */
export type Account =
  | { kind: 'available'; ownerId: string }
  | { kind: 'held'; ownerId: string }
  /** What an owner owes the platform for calls already served (a deposit charged back after it was spent): negative while owed. */
  | { kind: 'debt'; ownerId: string }
  | { kind: 'payable'; providerId: string }
  | { kind: 'revenue' }
  /** Captured by payment, not yet booked to a provider and the platform by settlement; zero once both halves applied. */
  | { kind: 'clearing' }
  | { kind: 'external' };

export function accountKey(a: Account): string {
  switch (a.kind) {
    case 'available':
    case 'held':
    case 'debt':
      return `owner:${a.ownerId}:${a.kind}`;
    case 'payable':
      return `provider:${a.providerId}:payable`;
    case 'revenue':
      return 'platform:revenue';
    case 'clearing':
      return 'platform:clearing';
    case 'external':
      return 'external';
  }
}

/** Money: integer minor units of one asset. Never a float. */
export interface Money {
  minor: bigint;
  asset: string;
}

export function money(minor: bigint, asset: string): Money {
  if (!/^[A-Z][A-Z0-9]{1,11}$/.test(asset)) throw new RangeError(`invalid asset code ${asset}`);
  return { minor, asset };
}

/** Only the outside world, the clearing account between payment and settlement, and debts may be negative. */
export function mayGoNegative(accountKeyValue: string): boolean {
  return accountKeyValue === 'external' || accountKeyValue === 'platform:clearing' || /^owner:.*:debt$/.test(accountKeyValue);
}
