import { Inject, Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type CallRequestedPayload } from '@tollgate/contracts';
import { PAYMENT_IDENTIFIER, appendPaymentIdentifierToExtensions, declarePaymentIdentifierExtension } from '@x402/extensions/payment-identifier';
import { PAYMENT_OPTIONS } from '../payment.constants';
import { type PaymentOptions } from '../payment.options';
import { type Refusal } from '../place-hold/refusal';
import { exactAmountProblem } from '../x402/exact-amount';
import { paymentRequired, requirementsFor } from '../x402/payment-required';
import { type PaymentPayload, X402_FACILITATOR, type X402Facilitator } from '../x402/x402.types';
import { X402Attempts } from './x402-attempts.repository';

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
 * without a facilitator is checked (network, asset, the exact amount, the payload's shape), the authorization's nonce
 * is spent, and the attempt is recorded. No facilitator is called here: verify and settle run after the commit.
 */
@Injectable()
export class X402Payments {
  constructor(
    @Inject(PAYMENT_OPTIONS) private readonly options: PaymentOptions,
    @Inject(X402_FACILITATOR) private readonly facilitator: X402Facilitator | null,
  ) {}

  /** Undefined: the attempt is recorded (the hold follows a confirmed settlement). Otherwise: why the call is refused. */
  async begin(manager: EntityManager, request: CallRequestedPayload, price: bigint, approved: boolean, causationId: string): Promise<Refusal | undefined> {
    const settings = this.options.x402;
    if (!this.facilitator) {
      return {
        code: 'PAYMENT_NO_SETTLEABLE_CHAIN', retryable: false,
        message: 'This gateway does not accept x402 payments. Pay from the prepaid balance: top up, then retry without _meta["x402/payment"].',
        details: { supportedNetworks: [] },
      };
    }
    const payment = request.x402Payment as unknown as PaymentPayload;
    const requirements = requirementsFor(settings, price);
    const network = (payment as { accepted?: { network?: unknown } })?.accepted?.network;
    if (typeof network === 'string' && network !== settings.network) {
      return {
        code: 'PAYMENT_NO_SETTLEABLE_CHAIN', retryable: false,
        message: `This call cannot settle on ${network}. Pay on ${settings.network}, as the payment requirement says.`,
        details: { network, supportedNetworks: [settings.network] }, x402PaymentRequired: this.required(request, price, 'unsupported network'),
      };
    }
    if (request.price.asset !== settings.assetCode) {
      return { code: 'PAYMENT_NO_SETTLEABLE_CHAIN', retryable: false, message: `Calls priced in ${request.price.asset} cannot be paid with x402 here.`, details: { asset: request.price.asset } };
    }
    const auth = payment?.payload?.authorization;
    const problem = exactAmountProblem(payment, requirements)
      ?? (typeof auth?.from !== 'string' || typeof auth?.nonce !== 'string' || !/^0x[0-9a-fA-F]{64}$/.test(auth.nonce) ? 'invalid_payload' : undefined);
    if (problem) return this.refusal(request, price, problem);
    const paymentId = paymentIdOf(request.intentId);
    const recorded = await X402Attempts.record(manager, {
      intent_id: request.intentId, network: settings.network, payer: auth.from.toLowerCase(), nonce: auth.nonce.toLowerCase(),
      amount_minor: requirements.amount, asset: request.price.asset, facilitator: this.facilitator.name, payment_id: paymentId,
      payment: withPaymentId(payment, paymentId), requirements, request, causation_id: causationId, approved,
    });
    return recorded ? undefined : this.refusal(request, price, 'nonce_already_used');
  }

  /** PAYMENT_REQUIRED with the reason and a fresh requirement to sign. */
  refusal(request: CallRequestedPayload, price: bigint, reason: string): Refusal {
    return {
      code: 'PAYMENT_REQUIRED', retryable: true,
      message: `The x402 payment was refused (${reason}). Sign a new payment for the requirement returned.`,
      details: { reason }, x402PaymentRequired: this.required(request, price, reason),
    };
  }

  private required(request: CallRequestedPayload, price: bigint, error: string): Record<string, unknown> {
    return { ...paymentRequired(this.options.x402, request.toolName, price, error) } as unknown as Record<string, unknown>;
  }
}
