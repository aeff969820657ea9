/**
 * The named accounts of the double-entry ledger (issue 5). Every movement of
 * money is a balanced posting between them; the external account stands for
 * money entering (deposits) or leaving (payouts) the platform.
 */
export type Account =
  | { kind: 'available'; ownerId: string }
  | { kind: 'held'; ownerId: string }
  | { kind: 'payable'; providerId: string }
  | { kind: 'revenue' }
  | { kind: 'external' };

export function accountKey(a: Account): string {
  switch (a.kind) {
    case 'available':
    case 'held':
      return `owner:${a.ownerId}:${a.kind}`;
    case 'payable':
      return `provider:${a.providerId}:payable`;
    case 'revenue':
      return 'platform:revenue';
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
