import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { createLogger } from '@tollgate/observability';
import { MppSteps } from '../mpp/mpp-steps';
import { PAYMENT_OPTIONS } from '../payment.constants';
import { type PaymentOptions } from '../payment.options';
import { type Refusal } from '../refusal';
import { type ChainState, X402_CHAIN } from '../x402/chain-state';
import { type SettleOutcome, X402_FACILITATOR, type X402Facilitator } from '../x402/x402.types';
import { settleStep, type SettleStep } from '../attempts/settle-verdict';
import { type AfterVerify, decideVerify, eventOfSettleStep, evolveX402Attempt, type X402AttemptEvent } from '../attempts/x402-attempt.model';
import { type X402AttemptRow } from '../attempts/x402-attempts.repository';
import { X402Payments } from '../attempts/x402-payments';

/** A step of an outside payment to take after commit: the attempt as leased, and — right after a verify — how to settle. */
export interface AttemptCommand {
  kind: 'step';
  intentId: string;
  attempt: X402AttemptRow;
  then?: Exclude<AfterVerify, 'stop'>;
}

/** What a step learned, fed back through the runner: the attempt's event and what the verdict books with it. */
export interface AttemptResult {
  kind: 'attempt';
  intentId: string;
  event: X402AttemptEvent;
  /** After a verify: settle now, or ask the chain first. */
  then?: AfterVerify;
  said?: SettleOutcome;
  mppReceipt?: Record<string, unknown>;
  /** A refusal's answer to the agent, with a fresh requirement of the rail it paid by. */
  refusal?: Refusal;
  /** A verdict awaited: asked again after this long. */
  retryInMs: number;
  /** Ids and time for what the verdict writes (decisions stay pure). */
  depositId: string;
  holdId: string;
  at: Date;
}

/**
 * The I/O of an outside payment's steps, run by the runner as commands (none holds a transaction open while the
 * facilitator, the chain or MPP's backend is asked):
 *
 * - `verifying` → ask verify; `decideVerify`: invalid → refused; valid → `settling`, then settle at once (a command of
 *   the verdict);
 * - `settling` → ask settle with the call's payment-identifier, then the chain (`settleStep`): the money moved → settled;
 *   the nonce unused and expired, or a first settle refused with the chain agreeing nothing moved → refused; anything
 *   else (a timeout, "nonce already used", "settled" with no transfer on the chain yet) → asked again later;
 * - `collecting` → upto's charge settled for the charge, decided by the chain the same way;
 * - MPP: the method's backend (`MppSteps`).
 *
 * The facilitator's answer is a claim; the chain's state of the authorization is the verdict.
 */
@Injectable()
export class AttemptSteps {
  private readonly logger = createLogger('payment').child({ component: 'x402-settlement' });

  constructor(
    @Inject(PAYMENT_OPTIONS) private readonly options: PaymentOptions,
    @Inject(X402_FACILITATOR) private readonly facilitator: X402Facilitator | null,
    @Inject(X402_CHAIN) private readonly chain: ChainState | null,
    private readonly payments: X402Payments,
    private readonly mpp: MppSteps,
  ) {}

  /** x402 through a facilitator, or MPP through its method: either has steps to take. */
  get active(): boolean {
    return this.facilitator !== null || this.mpp.offered;
  }

  /** How long a step holds its attempt: two facilitator timeouts and a margin. */
  get leaseMs(): number {
    const timeoutMs = this.options.x402Facilitator.kind === 'http' ? this.options.x402Facilitator.timeoutMs : 5_000;
    return timeoutMs * 2 + 5_000;
  }

  get pollMs(): number {
    return this.options.x402Retry?.pollMs ?? 1000;
  }

  /** Known before the first metered call asks for it (the calls' transactions never wait on the facilitator). */
  warmUp(): void {
    void this.facilitator?.uptoAddress(this.options.x402.network, true);
  }

  async run(c: AttemptCommand): Promise<AttemptResult> {
    const a = c.attempt;
    if (a.life.scheme === 'mpp' || a.life.scheme === 'mpp-authorize') {
      const s = await this.mpp.step(a, now());
      if (s.event.type === 'VerdictAwaited') this.logger.warn({ intentId: a.intent_id, problem: s.event.problem, tries: a.tries }, 'MPP payment has no verdict yet; nothing credited or refused, asked again later');
      return this.result(a, s.event, s.receipt ? { mppReceipt: s.receipt } : {});
    }
    if (c.then) return this.settle(a, c.then === 'ask-the-chain');
    if (a.life.step === 'settling') return this.settle(a, true);
    if (a.life.step === 'collecting') return this.collect(a);
    const v = Date.now() > Date.parse(a.request.deadlineAt) ? undefined : await this.facilitator!.verify(a.payment, a.requirements);
    const d = decideVerify({ verify: v, tries: a.tries, payer: a.payer, at: now(), ...(a.life.scheme ? { scheme: a.life.scheme } : {}) });
    if (v?.kind === 'unavailable') this.logger.warn({ intentId: a.intent_id, problem: v.problem, tries: a.tries }, 'x402 facilitator unavailable for verify');
    return this.result(a, d.event, { then: d.then });
  }

  /**
   * The settle step. A first settle is asked, then the chain; a retry (the attempt was already settling: an unknown
   * outcome, or a crash mid-settle) asks the chain first and the facilitator only while the nonce is unused and valid.
   */
  private async settle(a: X402AttemptRow, afterUnknown: boolean): Promise<AttemptResult> {
    if (afterUnknown) {
      const first = settleStep(await this.chainOf(a), { validBefore: validBeforeOf(a), afterUnknown });
      if (first.kind !== 'settle') return this.result(a, eventOfSettleStep(first, now()));
    }
    const said = await this.facilitator!.settle(a.payment, a.requirements);
    const step = settleStep(await this.chainOf(a), { settle: said, validBefore: validBeforeOf(a), afterUnknown });
    const event = eventOfSettleStep(step, now());
    if (event.type === 'VerdictAwaited') {
      this.logger.warn({ intentId: a.intent_id, problem: event.problem, tries: a.tries }, 'x402 settlement has no verdict from the chain yet; nothing credited or refused, asked again later');
    }
    return this.result(a, event, { said });
  }

  /**
   * upto's collection, once the call ended settled: the charge (≤ the maximum verified) is settled through the
   * facilitator the payer signed to, with the call's payment identifier, and the chain decides as for `exact`. A retry
   * after an unknown outcome asks the chain first.
   */
  private async collect(a: X402AttemptRow): Promise<AttemptResult> {
    const charge = BigInt(a.life.chargeMinor ?? '0');
    const requirements = { ...a.requirements, amount: charge.toString() };
    // Only the facilitator the payer signed to can settle this authorization: never ask another one.
    const named = a.payment.payload.permit2Authorization?.witness.facilitator.toLowerCase();
    const ours = (await this.facilitator!.uptoAddress(a.network, true))?.toLowerCase();
    if (named !== ours) return this.result(a, { type: 'VerdictAwaited', problem: `settle: this authorization names facilitator ${named}, the one configured is ${ours ?? 'unknown'}`, settleUnknown: false, at: now() });
    const afterUnknown = a.life.unknownSince !== undefined;
    if (afterUnknown) {
      const first = settleStep(await this.chainOf(a, charge), { validBefore: validBeforeOf(a), afterUnknown });
      if (first.kind !== 'settle') return this.result(a, collectionEvent(first));
    }
    const said = await this.facilitator!.settle(a.payment, requirements);
    const event = collectionEvent(settleStep(await this.chainOf(a, charge), { settle: said, validBefore: validBeforeOf(a), afterUnknown }));
    if (event.type === 'Refused') this.logger.warn({ intentId: a.intent_id, reason: event.reason, chargeMinor: charge.toString() }, 'x402 upto charge not collected: the facilitator refused and the chain shows nothing moved; the charge is booked as the owner\'s debt');
    return this.result(a, event);
  }

  private chainOf(a: X402AttemptRow, value = BigInt(a.amount_minor)) {
    return this.chain!.authorization({
      network: a.network, asset: a.requirements.asset, payer: a.payer, nonce: a.nonce, payTo: a.requirements.payTo, value,
    });
  }

  /** The step's result; a refusal carries PAYMENT_REQUIRED with a fresh requirement of the rail the agent paid by. */
  private async result(a: X402AttemptRow, event: X402AttemptEvent, more: Pick<AttemptResult, 'then' | 'said' | 'mppReceipt'> = {}): Promise<AttemptResult> {
    const next = evolveX402Attempt(a.life, event);
    const price = BigInt(a.amount_minor);
    const mpp = a.life.scheme === 'mpp' || a.life.scheme === 'mpp-authorize';
    const reason = next.refusal ?? 'refused';
    const refusal = next.step !== 'refused' ? undefined : mpp ? await this.mpp.refusal(a.request, price, reason) : await this.payments.refusal(a.request, price, reason);
    return {
      kind: 'attempt', intentId: a.intent_id, event, ...more, ...(refusal ? { refusal } : {}),
      retryInMs: event.type === 'VerdictAwaited' ? this.backoffMs(a.tries) : 0, depositId: randomUUID(), holdId: randomUUID(), at: new Date(),
    };
  }

  /** From the configured base, doubling, at most the configured ceiling (default 250 ms … 30 s). */
  private backoffMs(tries: number): number {
    const { baseMs = 250, maxMs = 30_000 } = this.options.x402Retry ?? {};
    return Math.min(baseMs * 2 ** Math.max(0, tries - 1), maxMs);
  }
}

/** The authorization's `validBefore` (upto: Permit2's `deadline`), unix seconds; a payload without one was refused before it was recorded. */
function validBeforeOf(a: X402AttemptRow): bigint {
  const p = a.payment.payload;
  return BigInt(p.permit2Authorization ? p.permit2Authorization.deadline : p.authorization.validBefore);
}

/** A collection's verdict: a refusal leaves the nonce spent (the authorization was this call's, and the call was served). */
function collectionEvent(step: SettleStep): X402AttemptEvent {
  const event = eventOfSettleStep(step, now());
  return event.type === 'Refused' ? { ...event, releaseNonce: false } : event;
}

function now(): string {
  return new Date().toISOString();
}
