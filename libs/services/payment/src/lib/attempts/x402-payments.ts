import { Inject, Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type CallRequestedPayload } from '@tollgate/contracts';
import { PAYMENT_IDENTIFIER, appendPaymentIdentifierToExtensions, declarePaymentIdentifierExtension } from '@x402/extensions/payment-identifier';
import { PAYMENT_OPTIONS } from '../payment.constants';
import { type PaymentOptions } from '../payment.options';
import { type Refusal } from '../refusal';
import { exactAmountProblem } from '../x402/exact-amount';
import { paymentRequired, requirementsFor, uptoRequirementsFor } from '../x402/payment-required';
import { uptoAuthorizationProblem } from '../x402/upto-authorization';
import { type PaymentPayload, type PaymentRequirements, X402_FACILITATOR, type X402Facilitator } from '../x402/x402.types';
import { type NewX402Attempt, X402Attempts } from './x402-attempts.repository';

/** An outside payment's first step, checked before the decision: why it is refused, or the attempt to record. */
export type RailCheck = { refusal: Refusal } | { attempt: NewX402Attempt; claim?: { key: string; expires: number } };

/** The payment-identifier the facilitator deduplicates settlement by: one per call (x402's payment-identifier extension). */
export function paymentIdOf(intentId: string): string {
  return `tollgate_${intentId.replace(/-/g, '')}`;
}

/** The payer's payload as payment sends it to the facilitator: with this call's payment-identifier. */
export function withPaymentId(payment: PaymentPayload, paymentId: string): PaymentPayload {
  const declared = { ...(payment.extensions ?? {}), [PAYMENT_IDENTIFIER]: declarePaymentIdentifierExtension(false) };
  return { ...payment, extensions: appendPaymentIdentifierToExtensions(declared, paymentId) };
}

/**
 * The first step of an x402 payment, in the CallRequested's transaction: what can be checked
 * without a facilitator is checked (network, asset, the amount, the payload's shape), the authorization's nonce
 * is spent, and the attempt is recorded. No facilitator is called here: verify and settle run after the commit.
 * A fixed price is paid by `exact` (the price, settled before the work); a metered tool by `upto` (its maximum
 * authorized before the work, the charge collected after the effect is confirmed).
 */
@Injectable()
export class X402Payments {
  constructor(
    @Inject(PAYMENT_OPTIONS) private readonly options: PaymentOptions,
    @Inject(X402_FACILITATOR) private readonly facilitator: X402Facilitator | null,
  ) {}

  /**
   * The payment checked in the CallRequested's transaction, reads only: why it is refused, or the attempt to record
   * (its nonce still unused; recording it spends the nonce, and a claim lost to a concurrent call is retried).
   */
  async check(m: EntityManager, request: CallRequestedPayload, price: bigint, approved: boolean, causationId: string): Promise<RailCheck> {
    const settings = this.options.x402;
    const requirements = await this.requirements(request, price);
    if (!this.facilitator || !requirements) return { refusal: this.notAccepted(request) };
    const payment = request.x402Payment as unknown as PaymentPayload;
    const network = (payment as { accepted?: { network?: unknown } })?.accepted?.network;
    if (typeof network === 'string' && network !== settings.network) {
      return { refusal: {
        code: 'PAYMENT_NO_SETTLEABLE_CHAIN', retryable: false,
        message: `This call cannot settle on ${network}. Pay on ${settings.network}, as the payment requirement says.`,
        details: { network, supportedNetworks: [settings.network] }, x402PaymentRequired: this.required(request, requirements, 'unsupported network'),
      } };
    }
    if (request.price.asset !== settings.assetCode) {
      return { refusal: { code: 'PAYMENT_NO_SETTLEABLE_CHAIN', retryable: false, message: `Calls priced in ${request.price.asset} cannot be paid with x402 here.`, details: { asset: request.price.asset } } };
    }
    const signed = signedPart(payment, requirements);
    if (typeof signed === 'string') return { refusal: await this.refusal(request, price, signed) };
    if (await X402Attempts.nonceUsed(m, settings.network, signed.payer, signed.nonce)) return { refusal: await this.refusal(request, price, 'nonce_already_used') };
    const paymentId = paymentIdOf(request.intentId);
    return { attempt: {
      intent_id: request.intentId, network: settings.network, ...signed, amount_minor: requirements.amount, asset: request.price.asset,
      facilitator: this.facilitator.name, payment_id: paymentId, payment: withPaymentId(payment, paymentId), requirements, request, causation_id: causationId, approved,
    } };
  }

  /**
   * The requirement this call is paid by: `exact` for the price, `upto` for a metered call's maximum (undefined when the
   * facilitator offers no `upto`, so a metered tool is paid from the wallet only).
   */
  async requirements(request: Pick<CallRequestedPayload, 'metered'>, price: bigint): Promise<PaymentRequirements | undefined> {
    if (!request.metered) return requirementsFor(this.options.x402, price);
    const address = await this.facilitator?.uptoAddress(this.options.x402.network);
    return address ? uptoRequirementsFor(this.options.x402, price, address) : undefined;
  }

  /** PAYMENT_REQUIRED with the reason and a fresh requirement to sign. */
  async refusal(request: CallRequestedPayload, price: bigint, reason: string): Promise<Refusal> {
    const requirements = await this.requirements(request, price);
    return {
      code: 'PAYMENT_REQUIRED', retryable: true,
      message: `The x402 payment was refused (${reason}). Sign a new payment for the requirement returned.`,
      details: { reason }, ...(requirements ? { x402PaymentRequired: this.required(request, requirements, reason) } : {}),
    };
  }

  required(request: Pick<CallRequestedPayload, 'toolName'>, requirements: PaymentRequirements, error: string): Record<string, unknown> {
    return { ...paymentRequired(request.toolName, requirements, error) } as unknown as Record<string, unknown>;
  }

  private notAccepted(request: CallRequestedPayload): Refusal {
    const metered = this.facilitator !== null && request.metered !== undefined;
    return {
      code: 'PAYMENT_NO_SETTLEABLE_CHAIN', retryable: false, details: { supportedNetworks: [] },
      message: metered
        ? 'This tool is priced by use and this gateway\'s facilitator offers no x402 upto scheme. Pay from the prepaid balance: top up, then retry without _meta["x402/payment"].'
        : 'This gateway does not accept x402 payments. Pay from the prepaid balance: top up, then retry without _meta["x402/payment"].',
    };
  }
}

/** The signer and the nonce the attempt spends, or why the payload is refused before any facilitator is asked. */
function signedPart(payment: PaymentPayload, requirements: PaymentRequirements): Pick<NewX402Attempt, 'payer' | 'nonce'> | string {
  if (requirements.scheme === 'upto') {
    const problem = uptoAuthorizationProblem(payment, requirements);
    if (problem) return problem;
    const auth = payment.payload.permit2Authorization!;
    // Permit2's nonces are their own space (uint256 per owner), apart from EIP-3009's bytes32 ones.
    return { payer: auth.from.toLowerCase(), nonce: `permit2:${auth.nonce}` };
  }
  const auth = payment?.payload?.authorization;
  const problem = exactAmountProblem(payment, requirements)
    ?? (typeof auth?.from !== 'string' || typeof auth?.nonce !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(auth.nonce) ? 'invalid_payload' : undefined);
  return problem ?? { payer: auth!.from.toLowerCase(), nonce: auth!.nonce.toLowerCase() };
}
