import { AMOUNT_MINOR_PATTERN, POSITIVE_AMOUNT_MINOR_PATTERN, USAGE_UNIT_PATTERN } from '@tollgate/contracts';

/**
 * A tool priced by use, as a listing declares it (the provider's `_meta["tollgate/listing"].metered`, or the admin's
 * override): so much per unit, at least the minimum, at most the maximum per call — what a call holds. Minor units of
 * the listing's asset, as decimal strings (money never travels as a float).
 */
export interface MeteredListing {
  unit: string;
  unitPriceMinor: string;
  minimumMinor?: string;
  maximumMinor: string;
}

/** The metered price of a listing, or the first field that is wrong, named, in a sentence. */
export function checkMetered(raw: unknown): { ok: true; metered: MeteredListing } | { ok: false; problem: string } {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) return { ok: false, problem: 'metered must be an object with unit, unitPriceMinor and maximumMinor.' };
  const m = raw as Record<string, unknown>;
  if (typeof m['unit'] !== 'string' || !USAGE_UNIT_PATTERN.test(m['unit'])) return { ok: false, problem: 'metered.unit must be 1 to 32 lower-case letters, digits or _ (e.g. 1k_tokens).' };
  const amount = (field: string, pattern: RegExp, what: string) =>
    typeof m[field] === 'string' && pattern.test(m[field] as string) ? undefined : `metered.${field} must be ${what} minor units, as a string.`;
  const problem = amount('unitPriceMinor', AMOUNT_MINOR_PATTERN, 'a whole, non-negative number of')
    ?? (m['minimumMinor'] === undefined ? undefined : amount('minimumMinor', AMOUNT_MINOR_PATTERN, 'a whole, non-negative number of'))
    ?? amount('maximumMinor', POSITIVE_AMOUNT_MINOR_PATTERN, 'a whole, positive number of');
  if (problem) return { ok: false, problem };
  const metered: MeteredListing = { unit: m['unit'], unitPriceMinor: m['unitPriceMinor'] as string, maximumMinor: m['maximumMinor'] as string,
    ...(m['minimumMinor'] !== undefined ? { minimumMinor: m['minimumMinor'] as string } : {}) };
  if (BigInt(metered.minimumMinor ?? '0') > BigInt(metered.maximumMinor)) return { ok: false, problem: 'metered.minimumMinor must not exceed metered.maximumMinor.' };
  return { ok: true, metered };
}
