import { type VerifyOutcome } from '../x402/x402.types';
import { saysNonceUsed, type SettleStep } from './settle-verdict';

/**
 * An x402 payment's own life, a sub-model of the call's, recorded with the CallRequested (`verifying`).
 *
 * `exact` (a fixed price, paid before the work): verified → `settling` (recorded before the facilitator is asked to
 * move money) → `settled` (the chain shows the transfer; the hold follows) or `refused`.
 *
 * MPP's `charge` (scheme `mpp`) is exact's life without a verify step: recorded `settling` (mppx checked the credential
 * when it was recorded), the method's backend charges → `settled` or `refused`. MPP's `authorize` (scheme
 * `mpp-authorize`, a metered tool's hold-then-capture) is recorded `settling`; authorized by the backend →
 * `authorized`, then as upto — except that a refund or a charge of 0 still captures 0 (`collecting`), so the backend
 * frees the payer's reserved funds.
 *
 * `upto` (a metered tool: the maximum authorized, the charge collected after the effect): verified → `authorized` (the
 * hold placed for the maximum, in the same transaction) → when the call ends, `released` (refunded: nothing is ever
 * collected) or captured for the charge: `collecting` → `collected` (the chain shows the transfer of the charge; a
 * charge of 0 is collected at once, nothing goes on chain) or `uncollected` (the facilitator refused to settle the
 * charge and the chain agrees nothing moved: the charge becomes the owner's debt, and ops see the attempt).
 *
 * While the worker has something to do (`verifying`, `settling`, `collecting`) an attempt without a verdict keeps the
 * problem and, once a settle was asked without an answer the chain confirms, since when its outcome is unknown.
 * The row keeps this life as `life`; `open` is derived from it on save, only because the claim of due attempts reads it.
 */
export interface X402AttemptLife {
  step: 'verifying' | 'settling' | 'settled' | 'refused' | 'authorized' | 'collecting' | 'collected' | 'uncollected' | 'released';
  /** The authorization's signer, as the facilitator's verify named it (or as the payload said, before that). */
  payer: string;
  /** The scheme (absent: x402 `exact`). */
  scheme?: AttemptScheme;
  /** `upto`: the charge to collect (minor units), set when the call ended settled. */
  chargeMinor?: string;
  /** ISO time since when no verdict on a settle is known (asked again; ops see it as unknown). */
  unknownSince?: string;
  /** Why the last try ended without a verdict. */
  problem?: string;
  /** The chain's transaction that paid us. */
  transaction?: string;
  /** Why the payment was refused (or, `uncollected`, why the charge could not be collected). */
  refusal?: string;
}

/** x402 `upto`, MPP `charge` (`mpp`) and MPP `authorize` (`mpp-authorize`); x402 `exact` is the default. */
export type AttemptScheme = 'upto' | 'mpp' | 'mpp-authorize';

export type X402AttemptEvent =
  | { type: 'Verified'; payer: string }
  /** No verdict this time: asked again later. `settleUnknown`: a settle may have moved money (unknown since `at`). */
  | { type: 'VerdictAwaited'; problem: string; settleUnknown: boolean; at: string }
  | { type: 'Settled'; transaction: string }
  /** `releaseNonce`: the chain never used the authorization's nonce, so its owner may still use it elsewhere. */
  | { type: 'Refused'; reason: string; releaseNonce: boolean }
  /** upto: the call ended settled for `chargeMinor` (0: nothing to collect). */
  | { type: 'Captured'; chargeMinor: bigint }
  /** upto: the call was refunded; the authorization is never used. */
  | { type: 'Released' };

/** What the worker does after a verify was decided. */
export type AfterVerify = 'settle' | 'ask-the-chain' | 'stop';

/** Verify tries before an unreachable facilitator refuses the call (verify moves nothing, so giving up is safe). */
export const VERIFY_TRIES = 5;

export function recordedX402Attempt(payer: string, scheme: 'exact' | AttemptScheme = 'exact'): X402AttemptLife {
  if (scheme === 'exact') return { step: 'verifying', payer };
  // MPP's credential was checked by mppx when it was recorded: the next step moves money.
  return { step: scheme === 'upto' ? 'verifying' : 'settling', payer, scheme };
}

/** The worker has a step to take: verify, settle, or collect. */
export function isOpenX402Attempt(life: X402AttemptLife): boolean {
  return life.step === 'verifying' || life.step === 'settling' || life.step === 'collecting';
}

/** The next life; the same object when the event does not apply (an attempt ends once; each step takes its own events). */
export function evolveX402Attempt(life: X402AttemptLife, e: X402AttemptEvent): X402AttemptLife {
  switch (e.type) {
    case 'Verified':
      if (life.step !== 'verifying') return life;
      return { ...life, step: life.scheme === 'upto' ? 'authorized' : 'settling', payer: e.payer };
    case 'VerdictAwaited':
      if (!isOpenX402Attempt(life)) return life;
      return { ...life, problem: e.problem.slice(0, 500), ...(e.settleUnknown ? { unknownSince: life.unknownSince ?? e.at } : {}) };
    case 'Settled':
      if (life.step === 'settling') return { ...life, step: life.scheme === 'mpp-authorize' ? 'authorized' : 'settled', transaction: e.transaction };
      return life.step === 'collecting' ? { ...life, step: 'collected', transaction: e.transaction } : life;
    case 'Refused':
      if (life.step === 'verifying' || life.step === 'settling') return { ...life, step: 'refused', refusal: e.reason.slice(0, 200) };
      return life.step === 'collecting' ? { ...life, step: 'uncollected', refusal: e.reason.slice(0, 200) } : life;
    case 'Captured':
      if (life.step !== 'authorized') return life;
      return { ...life, step: e.chargeMinor > 0n || life.scheme === 'mpp-authorize' ? 'collecting' : 'collected', chargeMinor: e.chargeMinor.toString() };
    case 'Released':
      if (life.step !== 'authorized') return life;
      return life.scheme === 'mpp-authorize' ? { ...life, step: 'collecting', chargeMinor: '0' } : { ...life, step: 'released' };
  }
}

/**
 * The verify step's decision (`verify` undefined: not asked, the call's deadline passed). A passed deadline or a stated invalidity refuses; an unreachable facilitator is asked
 * again, `VERIFY_TRIES` times at most; "nonce already used" is not a refusal (the payer may have paid us with this very
 * authorization already), so the chain is asked. `upto` moves no money at verify, so its "nonce already used" refuses:
 * an authorization spent elsewhere can never be collected.
 */
export function decideVerify(i: { verify?: VerifyOutcome; tries: number; payer: string; at: string; scheme?: AttemptScheme }): { event: X402AttemptEvent; then: AfterVerify } {
  const v = i.verify;
  if (!v) return { event: refused('call_deadline_passed'), then: 'stop' };
  if (v.kind === 'invalid' && (i.scheme === 'upto' || !saysNonceUsed(v.reason))) return { event: refused(v.reason), then: 'stop' };
  if (v.kind === 'unavailable') {
    if (i.tries >= VERIFY_TRIES) return { event: refused('facilitator_unavailable'), then: 'stop' };
    return { event: { type: 'VerdictAwaited', problem: `verify: ${v.problem}`, settleUnknown: false, at: i.at }, then: 'stop' };
  }
  // The payer is the authorization's signer; a facilitator that names none does not make it unknown.
  const payer = ((v.kind === 'valid' ? v.payer : undefined) ?? i.payer).toLowerCase();
  if (i.scheme === 'upto') return { event: { type: 'Verified', payer }, then: 'stop' };
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
