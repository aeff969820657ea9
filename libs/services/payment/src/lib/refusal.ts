import { type PaymentRefusal } from '@tollgate/call-life';

/** Why payment refuses a call: the agent error's fields, carried by PaymentRejected (the call-life model's payment refusal). */
export type Refusal = PaymentRefusal;

/** One call, one payment: an agent that sends both an x402 payment and an MPP credential is charged by neither. */
export const BOTH_RAILS: Refusal = {
  code: 'PAYMENT_REQUIRED', retryable: true, details: { reason: 'one_payment_per_call', rails: ['x402', 'mpp'] },
  message: 'This call carried both an x402 payment and an MPP credential; nothing was charged. Retry with one of them.',
};

/** What payment answers for a call whose CallRequested it parked: refused for good, nothing held or charged. */
export const PARKED_REFUSAL: Refusal = {
  code: 'INTERNAL_SERVER_ERROR', retryable: false,
  message: 'The platform could not process the payment of this call: no hold was placed and nothing was charged. This operation key keeps this answer; to try again, send a new key.',
  details: { charged: false }, final: true,
};

/** A refusal as PaymentRejected carries it (beside the call's intentId). */
export function rejectionOf(r: Refusal) {
  return {
    code: r.code, message: r.message, retryable: r.retryable,
    ...(r.retryAfterMs !== undefined ? { retryAfterMs: r.retryAfterMs } : {}),
    ...(r.details ? { details: r.details } : {}),
    ...(r.x402PaymentRequired ? { x402PaymentRequired: r.x402PaymentRequired } : {}),
    ...(r.mppPaymentRequired ? { mppPaymentRequired: r.mppPaymentRequired } : {}),
    ...(r.final ? { final: true } : {}),
  };
}
