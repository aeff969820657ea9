/**
 * Who reads the finance API, from the bearer token alone (never from a parameter): finance staff (read-only, optionally
 * limited to one owner's accounts and calls) or an operator (everything, including operation keys and payment
 * signatures, which finance views leave out).
 */
export type FinanceCaller =
  | { role: 'finance'; tokenId: string; ownerId: string | null }
  | { role: 'operator'; tokenId: string | null };

/** Whether the caller may read an owner's accounts and calls. */
export function mayReadOwner(caller: FinanceCaller, ownerId: string): boolean {
  return caller.role === 'operator' || caller.ownerId === null || caller.ownerId === ownerId;
}

/** Whether the caller may read across owners (all balances, a provider's accounts). */
export function mayReadAll(caller: FinanceCaller): boolean {
  return caller.role === 'operator' || caller.ownerId === null;
}

/** Fields of recorded events only operators see: the agent's operation key and the signed x402 payment. */
const OPERATOR_ONLY = new Set(['operationKey', 'x402Payment']);

/** An event's details as this caller may see them. */
export function visibleDetails(caller: FinanceCaller, details: Record<string, unknown>): Record<string, unknown> {
  if (caller.role === 'operator') return details;
  return Object.fromEntries(Object.entries(details).filter(([k]) => !OPERATOR_ONLY.has(k)));
}
