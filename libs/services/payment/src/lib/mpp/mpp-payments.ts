import type * as MppxCore from 'mppx' with { 'resolution-mode': 'import' };
import { Inject, Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type CallRequestedPayload } from '@tollgate/contracts';
import { PAYMENT_OPTIONS } from '../payment.constants';
import { type PaymentOptions } from '../payment.options';
import { type Refusal } from '../refusal';
import { paymentIdOf, type RailCheck } from '../attempts/x402-payments';
import { type PaymentPayload, type PaymentRequirements } from '../x402/x402.types';
import { MppReplays } from './mpp-replay.repository';
import { SandboxBackend } from './sandbox-backend';
import { createSandboxMppx, SANDBOX_METHOD, type SandboxMppx } from './sandbox-method';

/** How long a challenge may be paid: the agent signs and retries within it. */
const CHALLENGE_MINUTES = 5;

/**
 * MPP beside x402, by mppx: the challenge an agent pays (a `charge` of a fixed price, an `authorize` of a metered
 * tool's maximum, captured for the charge after the effect), and the first step of a payment, in the CallRequested's
 * transaction: mppx checks the credential (binding to our secret, expiry, realm, the amount this call asks), the
 * credential is claimed in the PostgreSQL replay store (used once, on every replica), and the attempt is recorded.
 * Nothing moves here: the method's backend is asked after the commit (`MppSteps`).
 */
@Injectable()
export class MppPayments {
  readonly backend?: SandboxBackend;
  readonly mppx?: SandboxMppx;
  readonly realm: string;

  constructor(@Inject(PAYMENT_OPTIONS) options: PaymentOptions) {
    const s = options.mpp;
    this.realm = s?.kind === 'sandbox' ? s.realm : 'tollgate';
    if (s?.kind !== 'sandbox') return;
    this.backend = new SandboxBackend(s.url, s.timeoutMs, s.token);
    this.mppx = createSandboxMppx(this.backend, { secretKey: s.secretKey, realm: s.realm });
  }

  /** MPP's payment-required data for this call (`{ httpStatus: 402, challenges }`), or undefined when MPP is off. */
  async paymentRequired(request: Pick<CallRequestedPayload, 'toolName' | 'metered' | 'price'>, price: bigint): Promise<Record<string, unknown> | undefined> {
    if (!this.mppx) return undefined;
    const options = { ...routeRequest(request, price, this.realm), description: `One call of the tool ${request.toolName}`, expires: new Date(Date.now() + CHALLENGE_MINUTES * 60_000).toISOString() };
    // One challenge function per intent (mppx names them by method, then intent).
    const byIntent = this.mppx.challenge[SANDBOX_METHOD] as unknown as Record<'charge' | 'authorize', (o: typeof options) => Promise<MppxCore.Challenge.Challenge>>;
    const challenge = await byIntent[request.metered ? 'authorize' : 'charge'](options);
    return { httpStatus: 402, challenges: [challenge] };
  }

  /**
   * The credential checked in the CallRequested's transaction, reads only: why it is refused, or the attempt to record
   * with the credential's claim in the replay store (used once, on every replica; a claim lost to a concurrent call is
   * retried, and then refused here).
   */
  async check(m: EntityManager, request: CallRequestedPayload, price: bigint, approved: boolean, causationId: string): Promise<RailCheck> {
    if (!this.mppx || !this.backend) {
      return { refusal: { code: 'PAYMENT_NO_SETTLEABLE_CHAIN', retryable: false, details: { rails: ['wallet'] }, message: 'This gateway does not accept MPP payments. Pay from the prepaid balance: top up, then retry without the MPP credential.' } };
    }
    const credential = request.mppCredential as unknown as MppxCore.Credential.Credential<{ token: string }>;
    const intent = request.metered ? 'authorize' : 'charge';
    try {
      if (credential?.challenge?.intent !== intent) throw new Error(`this call is paid by ${SANDBOX_METHOD}/${intent}`);
      await this.mppx.validateCredential(credential, { realm: this.realm, request: routeRequest(request, price, this.realm) });
    } catch (error) {
      return { refusal: await this.refusal(request, price, reasonOf(error)) };
    }
    const key = claimKeyOf(credential.challenge.id);
    if ((await MppReplays.get(m, key)) !== null) return { refusal: await this.refusal(request, price, 'credential_already_used') };
    const expires = Date.parse(credential.challenge.expires ?? '') || Date.now() + CHALLENGE_MINUTES * 60_000;
    // The replay store's claim keeps a credential to one call; the attempt's own nonce is the call's.
    return {
      claim: { key, expires: expires + 60_000 },
      attempt: {
        intent_id: request.intentId, network: `mpp:${this.realm}`, payer: 'mpp', nonce: `mpp:${request.intentId}`, amount_minor: price.toString(), asset: request.price.asset,
        facilitator: this.backend.name, payment_id: paymentIdOf(request.intentId), payment: credential as unknown as PaymentPayload,
        requirements: requirementsOf(request, price, this.realm, intent), request, causation_id: causationId, approved,
      },
    };
  }

  /** PAYMENT_REQUIRED with the reason and a fresh challenge to pay. */
  async refusal(request: CallRequestedPayload, price: bigint, reason: string): Promise<Refusal> {
    const required = await this.paymentRequired(request, price);
    return {
      code: 'PAYMENT_REQUIRED', retryable: true, details: { reason, rail: 'mpp' },
      message: `The MPP credential was refused (${reason}); nothing was charged. Pay the challenge returned and retry.`,
      ...(required ? { mppPaymentRequired: required } : {}),
    };
  }
}

/** A credential's key in the replay store: its challenge (one challenge, one payment). */
export function claimKeyOf(challengeId: string): string {
  return `mpp:credential:${challengeId}`;
}

/** What this call asks a credential to pay: the price (a metered tool's maximum) in the call's asset, to our realm. */
function routeRequest(request: Pick<CallRequestedPayload, 'price'>, price: bigint, realm: string) {
  return { amount: price.toString(), currency: request.price.asset, recipient: realm };
}

/** The attempt's requirement: the MPP request, in the shape payment attempts keep. */
function requirementsOf(request: CallRequestedPayload, price: bigint, realm: string, intent: 'charge' | 'authorize'): PaymentRequirements {
  return {
    scheme: intent === 'charge' ? 'mpp' : 'mpp-authorize', network: `mpp:${realm}`, amount: price.toString(), asset: request.price.asset, payTo: realm,
    maxTimeoutSeconds: CHALLENGE_MINUTES * 60, extra: { name: SANDBOX_METHOD, version: '1', assetCode: request.price.asset },
  };
}

/** A short, safe reason: mppx's problem type (its error codes), never its message's payload. */
function reasonOf(error: unknown): string {
  const type = (error as { type?: unknown } | null)?.type;
  if (typeof type === 'string') return type.replace(/^https?:\/\/\S+\/problems\//, '').slice(0, 80);
  return 'invalid_credential';
}
