import { type InvalidReason, type PaymentPayload, type PaymentRequirements, type UptoPermit2Authorization } from './x402.types';

const UINT = /^(0|[1-9][0-9]{0,77})$/;
const ADDRESS = /^0x[0-9a-fA-F]{40}$/;

/**
 * The `upto` scheme's checks that need no facilitator, run before the attempt is recorded: the payload's shape, the
 * scheme, the network, a maximum of exactly the hold asked (never more: the payer would be exposed past the call's
 * price; never less: the hold could not be placed), the pay-to address and the facilitator the payer signed the
 * authorization to (`witness.facilitator`: only that one can settle it, so one naming another can never be collected).
 * Undefined: the authorization may be verified.
 */
export function uptoAuthorizationProblem(payment: PaymentPayload, requirements: PaymentRequirements): InvalidReason | undefined {
  const auth = (payment?.payload as { permit2Authorization?: UptoPermit2Authorization } | undefined)?.permit2Authorization;
  if (payment?.x402Version !== 2 || !auth || typeof payment.payload.signature !== 'string' || !isShaped(auth)) return 'invalid_payload';
  if (payment.accepted?.scheme !== 'upto') return 'unsupported_scheme';
  if (payment.accepted.network !== requirements.network) return 'invalid_network';
  if (auth.permitted.token.toLowerCase() !== requirements.asset.toLowerCase()) return 'asset_mismatch';
  if (auth.witness.to.toLowerCase() !== requirements.payTo.toLowerCase()) return 'recipient_mismatch';
  const facilitator = requirements.extra.facilitatorAddress;
  if (!facilitator || auth.witness.facilitator.toLowerCase() !== facilitator.toLowerCase()) return 'facilitator_mismatch';
  const signed = BigInt(auth.permitted.amount);
  const max = BigInt(requirements.amount);
  if (signed < max) return 'insufficient_amount';
  return signed === max ? undefined : 'amount_mismatch';
}

function isShaped(a: UptoPermit2Authorization): boolean {
  return [a.from, a.spender, a.permitted?.token, a.witness?.to, a.witness?.facilitator].every((x) => typeof x === 'string' && ADDRESS.test(x))
    && [a.nonce, a.deadline, a.permitted?.amount, a.witness?.validAfter].every((x) => typeof x === 'string' && UINT.test(x));
}
