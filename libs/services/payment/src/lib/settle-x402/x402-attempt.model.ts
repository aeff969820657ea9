import { type VerifyOutcome } from '../x402/x402.types';
import { saysNonceUsed, type SettleStep } from './settle-verdict';

/**
 * An x402 payment's own life, a sub-model of the call's: recorded with the CallRequested (`verifying`), verified
 * (`settling`, recorded before the facilitator is asked to move money), then `settled` (the chain shows the transfer)
 * or `refused`. While it is open, an attempt without a verdict keeps the problem and, once a settle was asked
 * without an answer the chain confirms, since when its outcome is unknown.
 *
 * The row keeps this life as `life`; `open` is derived from it on save, only because the claim of due attempts reads it.
 */
export interface X402AttemptLife {
  step: 'verifying' | 'settling' | 'settled' | 'refused';
  /** The authorization's signer, as the facilitator's verify named it (or as the payload said, before that). */
  payer: string;
  /** ISO time since when no verdict on a settle is known (asked again; ops see it as unknown). */
  unknownSince?: string;
  /** Why the last try ended without a verdict. */
  problem?: string;
  /** The chain's transaction that paid us. */
  transaction?: string;
  /** Why the payment was refused. */
  refusal?: string;
}

export type X402AttemptEvent =
  | { type: 'Verified'; payer: string }
  /** No verdict this time: asked again later. `settleUnknown`: a settle may have moved money (unknown since `at`). */
  | { type: 'VerdictAwaited'; problem: string; settleUnknown: boolean; at: string }
  | { type: 'Settled'; transaction: string }
  /** `releaseNonce`: the chain never used the authorization's nonce, so its owner may still use it elsewhere. */
  | { type: 'Refused'; reason: string; releaseNonce: boolean };

/** What the worker does after a verify was decided. */
export type AfterVerify = 'settle' | 'ask-the-chain' | 'stop';

/** Verify tries before an unreachable facilitator refuses the call (verify moves nothing, so giving up is safe). */
export const VERIFY_TRIES = 5;

export function recordedX402Attempt(payer: string): X402AttemptLife {
  return { step: 'verifying', payer };
}

export function isOpenX402Attempt(life: X402AttemptLife): boolean {
  return life.step === 'verifying' || life.step === 'settling';
}

/** The next life; the same object when the event does not apply (an attempt ends once; only `verifying` is verified). */
export function evolveX402Attempt(life: X402AttemptLife, e: X402AttemptEvent): X402AttemptLife {
  if (!isOpenX402Attempt(life)) return life;
  switch (e.type) {
    case 'Verified':
      return life.step === 'verifying' ? { ...life, step: 'settling', payer: e.payer } : life;
    case 'VerdictAwaited':
      return { ...life, problem: e.problem.slice(0, 500), ...(e.settleUnknown ? { unknownSince: life.unknownSince ?? e.at } : {}) };
    case 'Settled':
      return { ...life, step: 'settled', transaction: e.transaction };
    case 'Refused':
      return { ...life, step: 'refused', refusal: e.reason.slice(0, 200) };
  }
}

/**
 * The verify step's decision (`verify` undefined: not asked, the call's deadline passed). A passed deadline or a stated invalidity refuses; an unreachable facilitator is asked
 * again, `VERIFY_TRIES` times at most; "nonce already used" is not a refusal (the payer may have paid us with this very
 * authorization already), so the chain is asked.
 */
export function decideVerify(i: { verify?: VerifyOutcome; tries: number; payer: string; at: string }): { event: X402AttemptEvent; then: AfterVerify } {
  const v = i.verify;
  if (!v) return { event: refused('call_deadline_passed'), then: 'stop' };
  if (v.kind === 'invalid' && !saysNonceUsed(v.reason)) return { event: refused(v.reason), then: 'stop' };
  if (v.kind === 'unavailable') {
    if (i.tries >= VERIFY_TRIES) return { event: refused('facilitator_unavailable'), then: 'stop' };
    return { event: { type: 'VerdictAwaited', problem: `verify: ${v.problem}`, settleUnknown: false, at: i.at }, then: 'stop' };
  }
  // The exact scheme's payer is the authorization's signer; a facilitator that names none does not make it unknown.
  const payer = ((v.kind === 'valid' ? v.payer : undefined) ?? i.payer).toLowerCase();
  return { event: { type: 'Verified', payer }, then: v.kind === 'valid' ? 'settle' : 'ask-the-chain' };
}

/** The settle step's verdict (the chain's, see `settleStep`) as the attempt's event. */
export function eventOfSettleStep(step: SettleStep, at: string): X402AttemptEvent {
  if (step.kind === 'credit') return { type: 'Settled', transaction: step.transaction };
  if (step.kind === 'refuse') return { type: 'Refused', reason: step.reason, releaseNonce: step.releaseNonce };
  return { type: 'VerdictAwaited', problem: step.kind === 'unknown' ? step.problem : 'settle: not asked yet', settleUnknown: true, at };
}

function refused(reason: string): X402AttemptEvent {
  return { type: 'Refused', reason, releaseNonce: true };
}
