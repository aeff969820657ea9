import { type InvalidReason, type PaymentPayload, type PaymentRequirements } from './x402.types';

/**
 * The `exact` scheme moves the price, no more and no less: checked here before any facilitator is asked, so a
 * remote facilitator's leniency can never credit more than the call costs. Undefined when the amount is right.
 */
export function exactAmountProblem(payment: PaymentPayload, requirements: PaymentRequirements): InvalidReason | undefined {
  const value = payment?.payload?.authorization?.value;
  if (typeof value !== 'string' || !/^(0|[1-9][0-9]{0,77})$/.test(value)) return 'invalid_payload';
  const signed = BigInt(value);
  const price = BigInt(requirements.amount);
  if (signed < price) return 'insufficient_amount';
  return signed === price ? undefined : 'amount_mismatch';
}
