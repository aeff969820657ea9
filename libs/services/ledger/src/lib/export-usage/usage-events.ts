import { CloudEvent } from 'cloudevents';

/** A settled call as the ledger's timeline records it, for the usage export. */
export interface SettledCall {
  intentId: string;
  settledAt: Date;
  ownerId: string | null;
  agentId: string | null;
  toolName: string | null;
  operationKey: string | null;
  providerId: string;
  charge: { amountMinor: string; asset: string };
  usage: { unit: string; units?: string; unitPriceMinor: string; minimumMinor?: string; flag?: string } | null;
  rail: 'wallet' | 'x402' | 'mpp' | 'free';
}

/** The CloudEvents type of one settled call's usage (reverse-DNS, versioned). */
export const USAGE_EVENT_TYPE = 'io.tollgate.call.usage.v1';

/**
 * One settled call as a CloudEvent (1.0, built and validated by the CloudEvents SDK): `id` is the call's intentId
 * (unique for ever, so a meter that deduplicates on id — Stripe meters' identifier, Lago's transaction_id, Orb's
 * idempotency key, OpenMeter's id + source — never bills a call twice, however often the export is re-run); `time`
 * the settlement; `subject` the owner billed. `data.value` is what a meter sums: the units of a metered call, 1 for a
 * fixed-price one; the charge in minor units travels beside it.
 */
export function usageEvent(c: SettledCall, source: string): CloudEvent<Record<string, unknown>> {
  return new CloudEvent({
    specversion: '1.0', id: c.intentId, source, type: USAGE_EVENT_TYPE, time: c.settledAt.toISOString(), ...(c.ownerId ? { subject: c.ownerId } : {}),
    datacontenttype: 'application/json',
    data: {
      intentId: c.intentId, operationKey: c.operationKey, agentId: c.agentId, tool: c.toolName, providerId: c.providerId, rail: c.rail,
      unit: c.usage?.unit ?? 'call', value: c.usage ? (c.usage.units ?? '0') : '1', unitPriceMinor: c.usage?.unitPriceMinor ?? c.charge.amountMinor,
      ...(c.usage?.minimumMinor ? { minimumMinor: c.usage.minimumMinor } : {}), chargeMinor: c.charge.amountMinor, asset: c.charge.asset,
      ...(c.usage?.flag ? { flag: c.usage.flag } : {}),
    },
  });
}
