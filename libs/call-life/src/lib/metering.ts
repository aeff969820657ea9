import { type Amount, type MeteredPrice, type UsageReport } from './call-event';
import { type CallState } from './call-state';
import { confirmedAttempt } from './decisions';

/** Why a metered charge was not simply units × unit price: a report that could not be used, or one past the hold. */
export type UsageFlag = NonNullable<UsageReport['problem']> | 'over_max';

/** What a call costs: the charge (≤ the hold), and for a metered call the usage it was computed from. */
export interface Charge {
  amount: Amount;
  /** The hold minus the charge: given back to the payer when the call settles. */
  released: Amount;
  metered?: MeteredPrice & { units?: string };
  /** A usage report ops should look at (the charge followed the documented rule, never above the hold). */
  flag?: UsageFlag;
}

/**
 * The charge rule of a metered call, over the hold H (its maximum), the unit price P, the minimum M (0 when none) and
 * the reported units U:
 * - a usable report: min(max(U × P, M), H) — flagged `over_max` when U × P > H (the payer never pays past the hold);
 * - no usable report (missing, malformed, negative, another unit): min(M, H), flagged. This follows Stripe meters and
 *   OpenMeter: a usage event that fails validation is not ingested, so the call is billed as if it reported nothing.
 * Pure integer arithmetic on bigint minor units.
 */
export function meteredCharge(hold: bigint, price: MeteredPrice, usage: UsageReport | undefined): { chargedMinor: bigint; flag?: UsageFlag } {
  const minimum = BigInt(price.minimumMinor ?? '0');
  const cap = (v: bigint) => (v > hold ? hold : v);
  if (!usage || usage.problem || usage.units === undefined) return { chargedMinor: cap(minimum), flag: usage?.problem ?? 'missing' };
  const raw = BigInt(usage.units) * BigInt(price.unitPriceMinor);
  const charged = raw > minimum ? raw : minimum;
  if (charged <= hold) return { chargedMinor: charged };
  // Past the hold: capped. Flagged when the provider's report is the cause (a minimum above the hold is a listing's).
  return raw > hold ? { chargedMinor: hold, flag: 'over_max' } : { chargedMinor: hold };
}

/**
 * What the call costs once its effect is confirmed: the whole hold at a fixed price; the metered rule otherwise, over
 * the usage of the confirmed attempt. Undefined while nothing is held or no effect is confirmed.
 */
export function chargeOf(state: CallState): Charge | undefined {
  const held = state.held;
  const attempt = confirmedAttempt(state);
  if (!held || attempt === undefined) return undefined;
  const hold = BigInt(held.amount.amountMinor);
  const asset = held.amount.asset;
  // The price as each service knows it: from the request, or (settlement, payment) from the hold, which repeats it. The
  // usage is the one confirmed with the effect — every service reads it there, so all compute one charge (a result's
  // own report is what the provider said; an effect confirmed otherwise, by a reconciliation, carries none).
  const price = state.request?.metered ?? held.metered;
  if (!price) return { amount: held.amount, released: { amountMinor: '0', asset } };
  const usage = state.attempts[String(attempt)]?.confirmed?.usage;
  const { chargedMinor, flag } = meteredCharge(hold, price, usage);
  return {
    amount: { amountMinor: chargedMinor.toString(), asset }, released: { amountMinor: (hold - chargedMinor).toString(), asset },
    metered: { ...price, ...(usage?.units !== undefined && !usage.problem ? { units: usage.units } : {}) }, ...(flag ? { flag } : {}),
  };
}
