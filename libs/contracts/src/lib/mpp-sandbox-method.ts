import type * as MppxCore from 'mppx' with { 'resolution-mode': 'import' };

/** The sandbox MPP payment method's name, as challenges and credentials carry it. */
export const SANDBOX_METHOD = 'tollgate-sandbox';

/**
 * The sandbox MPP method's wire contract, by mppx's `Method.from` — shared by the payment service (its server side)
 * and any payer (its client side), as a payment method publishes it. Two intents: `charge` (a fixed price, charged
 * when the credential is verified) and `authorize` (a metered tool's maximum, captured for the charge after the
 * effect). The request names the amount (minor units), currency and recipient; the credential's payload is the
 * payer's token at the method's backend. mppx ships ES modules only, so it is loaded on first use.
 */
export function sandboxMethods() {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Method, z } = require('mppx') as typeof MppxCore;
  const request = z.object({ amount: z.string(), currency: z.string(), recipient: z.string() });
  const credential = { payload: z.object({ token: z.string() }) };
  return {
    charge: Method.from({ name: SANDBOX_METHOD, intent: 'charge', schema: { credential, request } }),
    authorize: Method.from({ name: SANDBOX_METHOD, intent: 'authorize', schema: { credential, request } }),
  };
}
