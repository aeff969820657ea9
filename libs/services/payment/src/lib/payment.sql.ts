import { accountKey } from '@tollgate/accounting';

/** The advisory lock of an agent's spending is this prefix and the agent's id. */
export const AGENT_LOCK_PREFIX = 'payment-agent:';

/** An owner's account key around its owner id, as SQL builds it from a row's owner (the one place that names accounts). */
export function accountAround(kind: 'available' | 'debt'): [string, string] {
  return accountKey({ kind, ownerId: '\u0000' }).split('\u0000') as [string, string];
}
