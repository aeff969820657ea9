import type * as MppxCore from 'mppx' with { 'resolution-mode': 'import' };
import { Injectable } from '@nestjs/common';
import { type X402AttemptEvent } from '../attempts/x402-attempt.model';
import { type X402AttemptRow } from '../attempts/x402-attempts.repository';
import { MppPayments } from './mpp-payments';
import { mppxCore } from './mppx';
import { type SandboxPayment } from './sandbox-backend';
import { SandboxOutcomeUnknown } from './sandbox-method';

/** An MPP step's verdict: the attempt's event, and the receipt the agent is given when the money moved. */
export interface MppStep {
  event: X402AttemptEvent;
  receipt?: Record<string, unknown>;
}

/**
 * The MPP steps after the CallRequested committed, as the payment worker runs them on a claimed attempt:
 * `settling` → the method's backend charges (or authorizes) through mppx's `broadcastCredential`; `collecting` → an
 * authorization is captured for the charge (0 frees it). A try after the first asks the backend's own record of the
 * challenge first, so an answer lost to a crash or a timeout is found, never paid twice; a stated refusal refuses
 * (or leaves a capture uncollected); anything else is asked again later.
 */
@Injectable()
export class MppSteps {
  constructor(private readonly mpp: MppPayments) {}

  get offered(): boolean {
    return this.mpp.mppx !== undefined;
  }

  async step(a: X402AttemptRow, at: string): Promise<MppStep> {
    const credential = a.payment as unknown as MppxCore.Credential.Credential<{ token: string }>;
    const reference = credential.challenge.id;
    if (a.tries > 1) {
      const known = await this.mpp.backend!.record(reference);
      if (known.kind === 'unknown') return awaited(known.problem, at);
      const done = known.kind === 'found' && (a.life.step === 'settling' || known.payment.captured !== undefined);
      if (done) return this.moved(a, known.payment);
      if (a.life.step === 'settling' && Date.parse(credential.challenge.expires ?? '') < Date.now()) return { event: { type: 'Refused', reason: 'payment_expired', releaseNonce: true } };
    }
    return a.life.step === 'collecting' ? this.capture(a, reference, at) : this.broadcast(a, credential, at);
  }

  private async broadcast(a: X402AttemptRow, credential: MppxCore.Credential.Credential, at: string): Promise<MppStep> {
    try {
      const receipt = await this.mpp.mppx!.broadcastCredential(credential, { realm: this.mpp.realm, request: { amount: a.amount_minor, currency: a.asset, recipient: this.mpp.realm } });
      return { event: { type: 'Settled', transaction: receipt.reference }, receipt: { ...receipt, challengeId: credential.challenge.id, intent: credential.challenge.intent } };
    } catch (error) {
      if (error instanceof SandboxOutcomeUnknown) return awaited(error.problem, at);
      if (error instanceof mppxCore().Errors.PaymentError) return { event: { type: 'Refused', reason: reasonOf(error), releaseNonce: true } };
      throw error;
    }
  }

  /** PAYMENT_REQUIRED with a fresh MPP challenge, for a payment the method refused. */
  refusal(request: X402AttemptRow['request'], price: bigint, reason: string) {
    return this.mpp.refusal(request, price, reason);
  }


  private async capture(a: X402AttemptRow, reference: string, at: string): Promise<MppStep> {
    const o = await this.mpp.backend!.capture(reference, BigInt(a.life.chargeMinor ?? '0'));
    if (o.kind === 'unknown') return awaited(o.problem, at);
    if (o.kind === 'refused') return { event: { type: 'Refused', reason: o.reason, releaseNonce: false } };
    return this.moved(a, o.payment);
  }

  /** The backend's record says the money moved: the same verdict (and receipt) as a first answer would have given. */
  private moved(a: X402AttemptRow, p: SandboxPayment): MppStep {
    const challenge = (a.payment as unknown as MppxCore.Credential.Credential).challenge;
    return {
      event: { type: 'Settled', transaction: p.reference },
      receipt: { method: challenge.method, reference: p.reference, status: 'success', timestamp: p.at, challengeId: challenge.id, intent: challenge.intent },
    };
  }
}

function awaited(problem: string, at: string): MppStep {
  return { event: { type: 'VerdictAwaited', problem: `mpp: ${problem}`, settleUnknown: true, at } };
}

function reasonOf(error: { type?: unknown; message?: unknown }): string {
  const reason = /: (\w[\w ]{0,60})\.?$/.exec(String(error.message ?? ''))?.[1];
  return (reason ?? String(error.type ?? 'verification_failed')).replace(/^https?:\/\/\S+\/problems\//, '').replace(/\s+/g, '_').slice(0, 80);
}
