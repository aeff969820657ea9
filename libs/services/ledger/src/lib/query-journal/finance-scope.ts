import { type FinanceCaller, mayReadAll } from '../finance-access/finance-caller';
import { type JournalFilter } from './journal-query';

/**
 * The filter a caller may run: an owner-limited finance token reads only its owner's accounts — the filter is narrowed
 * to them, and one that names anything else is refused (never silently widened or emptied).
 */
export function scopedFilter(caller: FinanceCaller, f: JournalFilter): JournalFilter | 'forbidden' {
  if (mayReadAll(caller)) return f;
  const ownerId = (caller as { ownerId: string }).ownerId;
  if (f.ownerId !== undefined && f.ownerId !== ownerId) return 'forbidden';
  if (f.providerId !== undefined) return 'forbidden';
  if (f.account !== undefined && !f.account.startsWith(`owner:${ownerId}:`)) return 'forbidden';
  return { ...f, ownerId };
}
