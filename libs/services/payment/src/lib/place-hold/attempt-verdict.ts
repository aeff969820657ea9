import { Movements, repaidOf } from '@tollgate/accounting';
import { money, WalletChargedBack, WalletFunded } from '@tollgate/contracts';
import { hold, noFunds, type PaymentDecision, refuse } from './hold-plan';
import { type SettleResponse } from '../x402/x402.types';
import { type AttemptCommand, type AttemptResult } from './attempt-steps';
import { evolveX402Attempt, type X402AttemptLife } from '../attempts/x402-attempt.model';
import { type PayingCall, type X402AttemptRow } from '../attempts/x402-attempts.repository';
import { claimKeyOf } from '../mpp/mpp-payments';

/** Due work: the attempt leased to its next step (due again, to another instance, when the lease runs out). */
export function leaseAttempt(attempt: X402AttemptRow, leaseMs: number): PaymentDecision {
  const command: AttemptCommand = { kind: 'step', intentId: attempt.intent_id, attempt: { ...attempt, tries: attempt.tries + 1 } };
  return { commands: [command], extra: { leased: { leaseMs } } };
}

/**
 * A step's verdict over the attempt's locked row and its owner's locked wallet, pure: the attempt's next life (nothing
 * when the event does not apply — another step ended it first), and what its end books: settled or authorized → the
 * wallet credited with exactly what was paid (repaying a debt first when money moved) and the hold placed from it;
 * refused → PaymentRejected with a fresh requirement (an MPP credential refused with nothing moved is given back: its
 * claim in the replay store dropped, as x402 gives back a nonce the chain never used); an upto charge uncollected → charged back (the owner's debt when
 * the wallet is short). Right after a verify that says settle, the settle is the next command.
 */
export function decideAttempt(p: PayingCall | undefined, r: AttemptResult): PaymentDecision {
  if (!p) return {};
  const life = evolveX402Attempt(p.attempt.life, r.event);
  if (life === p.attempt.life) return {};
  const refused = r.event.type === 'Refused' && life.step === 'refused';
  const mpp = life.scheme === 'mpp' || life.scheme === 'mpp-authorize';
  const saved = {
    attempt: {
      life, keepLease: r.event.type === 'Verified', retryInMs: r.retryInMs, releaseNonce: refused && r.event.type === 'Refused' && r.event.releaseNonce,
      ...(refused && mpp && r.event.type === 'Refused' && r.event.releaseNonce ? { releaseClaim: claimKeyOf(challengeIdOf(p.attempt)) } : {}),
    },
  };
  const next: AttemptCommand[] = r.event.type === 'Verified' && life.step === 'settling' && (r.then === 'settle' || r.then === 'ask-the-chain')
    ? [{ kind: 'step', intentId: p.attempt.intent_id, attempt: { ...p.attempt, life, payer: life.payer }, then: r.then }] : [];
  const outcome = life.step === 'settled' || life.step === 'authorized' ? funded(p, life, r)
    : refused ? refuse(p.attempt.request, r.refusal!)
      : life.step === 'uncollected' ? uncollected(p, life) : {};
  return { ...outcome, commands: next, extra: { ...outcome.extra, ...saved } };
}

/** The money arrived: credited under its reference, then held (short only when it repaid a debt first). */
function funded(p: PayingCall, life: X402AttemptLife, r: AttemptResult): PaymentDecision {
  const { attempt: a } = p;
  const { request } = a;
  const f = fundingOf(p, life, r);
  const amount = BigInt(a.amount_minor);
  const owed = f.repayDebt ? p.owed : 0n;
  const repaid = repaidOf(owed, amount);
  const credit: PaymentDecision = {
    postings: [{ id: `deposit:${f.reference}`, kind: 'deposit', entries: Movements.deposit(request.ownerId, { minor: amount, asset: a.asset }, owed), intentId: a.intent_id }],
    announce: [{ event: WalletFunded, payload: {
      depositId: r.depositId, ownerId: request.ownerId, reference: f.reference, source: f.source, amount: money(amount, a.asset), repaidDebt: money(repaid, a.asset),
    } }],
    extra: { deposit: { deposit_id: r.depositId, reference: f.reference, owner_id: request.ownerId, source: f.source, amount_minor: a.amount_minor, asset: a.asset } },
  };
  const available = p.available + amount - repaid;
  const then = available < amount ? refuse(request, noFunds({ hasWallet: true }, amount, available, a.asset))
    : hold(request, { holdId: r.holdId, charged: amount, free: false, approved: a.approved, now: r.at, ...f.shown });
  return {
    postings: [...credit.postings!, ...(then.postings ?? [])], emit: then.emit ?? [], announce: credit.announce!,
    extra: { ...credit.extra, ...then.extra },
  };
}

/** An upto charge the facilitator would not settle: charged back from the wallet, the shortfall the owner's debt. */
function uncollected(p: PayingCall, life: X402AttemptLife): PaymentDecision {
  const { attempt: a } = p;
  return chargeBack({ ownerId: a.request.ownerId, reference: `x402-upto:${a.intent_id}:uncollected`, amountMinor: BigInt(life.chargeMinor ?? '0'), asset: a.asset, intentId: a.intent_id }, p.available);
}

/**
 * Part of an outside authorization reversed (its unused rest when the call ends, a charge that could not be collected):
 * a chargeback of that part under its reference, taken from `available` as far as it goes, the shortfall the owner's
 * debt, and WalletChargedBack.
 */
export function chargeBack(r: { ownerId: string; reference: string; amountMinor: bigint; asset: string; intentId: string }, available: bigint): Pick<PaymentDecision, 'postings' | 'announce'> {
  if (r.amountMinor <= 0n) return {};
  const amount = { minor: r.amountMinor, asset: r.asset };
  return {
    postings: [{ id: `chargeback:${r.reference}`, kind: 'chargeback', entries: Movements.chargeback(r.ownerId, amount, available), intentId: r.intentId }],
    announce: [{ event: WalletChargedBack, payload: {
      ownerId: r.ownerId, reference: r.reference, amount: money(r.amountMinor, r.asset), fromAvailable: money(available < r.amountMinor ? available : r.amountMinor, r.asset),
    } }],
  };
}

/**
 * What funded the hold: an x402 settlement (exact) or authorization (upto), an MPP charge or authorization (its
 * receipt) — each under its own reference. Only money that moved repays a debt; an authorization is held whole.
 */
function fundingOf(p: PayingCall, life: X402AttemptLife, r: AttemptResult) {
  const { attempt: a } = p;
  const deferred = life.step === 'authorized';
  if (life.scheme === 'mpp' || life.scheme === 'mpp-authorize') {
    return { repayDebt: !deferred, reference: `${life.scheme}:${a.network}:${a.nonce}`, source: life.scheme, shown: { mppReceipt: r.mppReceipt ?? { reference: life.transaction } } };
  }
  if (deferred) {
    const response: SettleResponse = { success: true, transaction: '', network: a.network, payer: life.payer, scheme: 'upto', authorized: a.amount_minor };
    return { repayDebt: false, reference: `x402-upto:${a.network}:${a.payer}:${a.nonce}`, source: 'x402-upto' as const, shown: { x402Response: response } };
  }
  // What the agent is told: the chain's transaction, whatever the facilitator said (or did not say).
  const payer = r.said?.kind === 'settled' && r.said.response.payer ? r.said.response.payer : a.payer;
  return { repayDebt: true, reference: `x402:${a.network}:${a.nonce}`, source: 'x402' as const, shown: { x402Response: { success: true, transaction: life.transaction!, network: a.network, payer } } };
}

/** The MPP challenge a credential paid (its claim's key in the replay store). */
function challengeIdOf(a: X402AttemptRow): string {
  return (a.payment as unknown as { challenge: { id: string } }).challenge.id;
}
