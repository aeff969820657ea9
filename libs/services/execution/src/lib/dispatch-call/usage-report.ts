import { type MeteredPrice, type UsageReport } from '@tollgate/call-life';

/** Where a provider reports what a metered call used, in its tool result: `_meta["tollgate/usage"] = { unit, units }`. */
export const USAGE_META_KEY = 'tollgate/usage';

/** The most units one report may claim (15 digits, like any amount): past it the report is malformed. */
const MAX_UNITS = 999_999_999_999_999n;

/**
 * A metered call's usage as the provider reported it: a whole number of the price's unit (`units` a non-negative
 * integer, as a JSON number or a decimal string; `unit`, when given, the price's), or why the report cannot be used.
 * Provider output is data: nothing here trusts it beyond its shape, and the charge rule caps it at the hold.
 */
export function usageReportOf(raw: { _meta?: unknown }, price: MeteredPrice, settlementOverrides?: string): UsageReport {
  const meta = typeof raw._meta === 'object' && raw._meta !== null ? (raw._meta as Record<string, unknown>) : {};
  const u = meta[USAGE_META_KEY];
  if ((u === undefined || u === null) && settlementOverrides !== undefined) return overridesReportOf(settlementOverrides, price);
  if (u === undefined || u === null) return { problem: 'missing' };
  if (typeof u !== 'object' || Array.isArray(u)) return { problem: 'malformed' };
  const { unit, units } = u as { unit?: unknown; units?: unknown };
  if (unit !== undefined && unit !== price.unit) return { problem: 'wrong_unit' };
  const text = typeof units === 'number' && Number.isSafeInteger(units) ? String(units) : typeof units === 'string' ? units.trim() : undefined;
  if (text === undefined || !/^-?\d{1,16}$/.test(text)) return { problem: 'malformed' };
  const n = BigInt(text);
  if (n < 0n) return { problem: 'negative' };
  if (n > MAX_UNITS) return { problem: 'malformed' };
  return { unit: price.unit, units: n.toString() };
}

/**
 * The usage an x402 server's `Settlement-Overrides` header states (used when the result carries no `_meta` report):
 * `{"amount": "<atomic units>"}`. The amount becomes whole units of the price, rounded down — the charge never exceeds
 * what the provider asked — then the charge rule applies as to any report. The header's other forms (a percent of
 * the requirement, a `$`-price) need the x402 requirement and the token's decimals, which a gateway call has not:
 * they, and anything else, are malformed.
 */
export function overridesReportOf(header: string, price: MeteredPrice): UsageReport {
  let amount: unknown;
  try {
    amount = (JSON.parse(header) as { amount?: unknown } | null)?.amount;
  } catch {
    return { problem: 'malformed' };
  }
  if (typeof amount !== 'string' || !/^\d{1,16}$/.test(amount)) return { problem: 'malformed' };
  return { unit: price.unit, units: (BigInt(amount) / BigInt(price.unitPriceMinor)).toString() };
}
