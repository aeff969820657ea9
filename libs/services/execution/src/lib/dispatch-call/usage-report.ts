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
export function usageReportOf(raw: { _meta?: unknown }, price: MeteredPrice): UsageReport {
  const meta = typeof raw._meta === 'object' && raw._meta !== null ? (raw._meta as Record<string, unknown>) : {};
  const u = meta[USAGE_META_KEY];
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
