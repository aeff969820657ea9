import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { createLogger } from '@tollgate/observability';
import { PAYMENT, PAYMENT_OPTIONS } from '../payment.constants';
import { type PaymentOptions } from '../payment.options';
import { AttemptsWake } from '../attempts/attempts-wake';
import { PlaceHoldWorkflow } from '../place-hold/place-hold.workflow';
import { type ChainState, X402_CHAIN } from '../x402/chain-state';
import { type SettleOutcome, type SettleResponse, X402_FACILITATOR, type X402Facilitator } from '../x402/x402.types';
import { FundWalletUseCase } from '../fund-wallet/fund-wallet.usecase';
import { MppSteps } from '../mpp/mpp-steps';
import { settleStep, type SettleStep } from '../attempts/settle-verdict';
import { decideVerify, eventOfSettleStep, type X402AttemptEvent, type X402AttemptLife } from '../attempts/x402-attempt.model';
import { X402Attempts, type X402AttemptRow } from '../attempts/x402-attempts.repository';
import { X402Payments } from '../attempts/x402-payments';

/**
 * The x402 steps after the CallRequested committed, each its own short transaction, none open while the facilitator
 * or the chain is asked:
 *
 * 1. claim a due attempt (a lease: a worker that dies mid-step leaves it to the next one once the lease runs out);
 * 2. `verifying` → ask verify; the decision (`decideVerify`): invalid → refused (PaymentRejected); valid → record
 *    `settling` *before* settle;
 * 3. `settling` → ask settle with the call's payment-identifier, then the chain (`settleStep`): the money moved to us →
 *    credit exactly that and place the hold, in one transaction; the nonce unused and expired, or a first settle
 *    refused with the chain agreeing nothing moved → PaymentRejected; anything else (a timeout, "nonce already used",
 *    "settled" with no transfer on the chain yet, the chain unreadable) → nothing credited, nothing refused, the chain
 *    asked again later (and the facilitator only while the nonce is unused and valid).
 *
 * Each outcome is an event of the attempt's own life (`x402-attempt.model.ts`), folded onto its locked row.
 * The facilitator's answer is a claim; the chain's state of the authorization is the verdict. So the payer is never
 * debited without the credit and never credited without the debit, whatever a facilitator deduplicates or says.
 */
@Injectable()
export class SettleX402UseCase implements OnModuleInit, OnModuleDestroy {
  private readonly logger = createLogger('payment').child({ component: 'x402-settlement' });
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private again = false;
  private stopped = false;

  constructor(
    @InjectDataSource(PAYMENT) private readonly dataSource: DataSource,
    @Inject(PAYMENT_OPTIONS) private readonly options: PaymentOptions,
    @Inject(X402_FACILITATOR) private readonly facilitator: X402Facilitator | null,
    @Inject(X402_CHAIN) private readonly chain: ChainState | null,
    private readonly holds: PlaceHoldWorkflow,
    private readonly wake: AttemptsWake,
    private readonly payments: X402Payments,
    private readonly wallets: FundWalletUseCase,
    private readonly mpp: MppSteps,
  ) {}

  /** x402 through a facilitator, or MPP through its method: either needs the worker. */
  private get active(): boolean {
    return this.facilitator !== null || this.mpp.offered;
  }

  onModuleInit(): void {
    if (!this.active) return;
    this.wake.listen(() => this.kick());
    // Known before the first metered call asks for it (the calls' transactions never wait on the facilitator).
    void this.facilitator?.uptoAddress(this.options.x402.network, true);
    this.timer = setInterval(() => this.kick(), this.options.x402Retry?.pollMs ?? 1000);
    this.timer.unref();
    this.kick();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** Runs the due attempts now (after a CallRequested with a payment committed, and on every poll). */
  kick(): void {
    if (this.stopped || !this.active) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.drain()
      .catch((err) => this.logger.warn({ err }, 'x402 settlement pass failed; retried on the next poll'))
      .finally(() => {
        this.running = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Figures for /metrics: attempts open, and those whose settlement outcome is unknown (being asked again). */
  counts(): Promise<{ open: number; unknown: number }> {
    return X402Attempts.openCounts(this.dataSource);
  }

  private async drain(): Promise<void> {
    for (let attempt = await this.claim(); attempt && !this.stopped; attempt = await this.claim()) await this.step(attempt);
  }

  private claim(): Promise<X402AttemptRow | undefined> {
    const timeoutMs = this.options.x402Facilitator.kind === 'http' ? this.options.x402Facilitator.timeoutMs : 5_000;
    return X402Attempts.claimDue(this.dataSource, timeoutMs * 2 + 5_000);
  }

  private async step(a: X402AttemptRow): Promise<void> {
    if (a.life.scheme === 'mpp' || a.life.scheme === 'mpp-authorize') {
      const s = await this.mpp.step(a, now());
      if (s.event.type === 'VerdictAwaited') this.logger.warn({ intentId: a.intent_id, problem: s.event.problem, tries: a.tries }, 'MPP payment has no verdict yet; nothing credited or refused, asked again later');
      return void (await this.record(a, s.event, undefined, s.receipt));
    }
    if (a.life.step === 'settling') return this.settle(a, true);
    if (a.life.step === 'collecting') return this.collect(a);
    const v = Date.now() > Date.parse(a.request.deadlineAt) ? undefined : await this.facilitator!.verify(a.payment, a.requirements);
    const d = decideVerify({ verify: v, tries: a.tries, payer: a.payer, at: now(), ...(a.life.scheme ? { scheme: a.life.scheme } : {}) });
    if (v?.kind === 'unavailable') this.logger.warn({ intentId: a.intent_id, problem: v.problem, tries: a.tries }, 'x402 facilitator unavailable for verify');
    const life = await this.record(a, d.event);
    if (life && d.then !== 'stop') await this.settle({ ...a, payer: life.payer, life }, d.then === 'ask-the-chain');
  }

  /**
   * The settle step. A first settle is asked, then the chain; a retry (the attempt was already settling: an unknown
   * outcome, or a crash mid-settle) asks the chain first and the facilitator only while the nonce is unused and valid.
   */
  private async settle(a: X402AttemptRow, afterUnknown: boolean): Promise<void> {
    if (afterUnknown) {
      const first = settleStep(await this.chainOf(a), { validBefore: validBeforeOf(a), afterUnknown });
      if (first.kind !== 'settle') return void (await this.record(a, eventOfSettleStep(first, now())));
    }
    const said = await this.facilitator!.settle(a.payment, a.requirements);
    const step = settleStep(await this.chainOf(a), { settle: said, validBefore: validBeforeOf(a), afterUnknown });
    const event = eventOfSettleStep(step, now());
    if (event.type === 'VerdictAwaited') {
      this.logger.warn({ intentId: a.intent_id, problem: event.problem, tries: a.tries }, 'x402 settlement has no verdict from the chain yet; nothing credited or refused, asked again later');
    }
    await this.record(a, event, said);
  }

  /**
   * upto's collection, once the call ended settled: the charge (≤ the maximum verified) is settled through the
   * facilitator the payer signed to, with the call's payment identifier, and the chain decides as for `exact`: the
   * transfer of the charge → collected; the facilitator refusing a first settle (a partial settle it does not support,
   * say) with the chain showing nothing moved, or the authorization expired unused → uncollected; anything else → asked
   * again. A retry after an unknown outcome asks the chain first.
   */
  private async collect(a: X402AttemptRow): Promise<void> {
    const charge = BigInt(a.life.chargeMinor ?? '0');
    const requirements = { ...a.requirements, amount: charge.toString() };
    // Only the facilitator the payer signed to can settle this authorization: never ask another one.
    const named = a.payment.payload.permit2Authorization?.witness.facilitator.toLowerCase();
    const ours = (await this.facilitator!.uptoAddress(a.network, true))?.toLowerCase();
    if (named !== ours) return void (await this.record(a, { type: 'VerdictAwaited', problem: `settle: this authorization names facilitator ${named}, the one configured is ${ours ?? 'unknown'}`, settleUnknown: false, at: now() }));
    const afterUnknown = a.life.unknownSince !== undefined;
    if (afterUnknown) {
      const first = settleStep(await this.chainOf(a, charge), { validBefore: validBeforeOf(a), afterUnknown });
      if (first.kind !== 'settle') return void (await this.record(a, collectionEvent(first)));
    }
    const said = await this.facilitator!.settle(a.payment, requirements);
    const step = settleStep(await this.chainOf(a, charge), { settle: said, validBefore: validBeforeOf(a), afterUnknown });
    const event = collectionEvent(step);
    if (event.type === 'Refused') this.logger.warn({ intentId: a.intent_id, reason: event.reason, chargeMinor: charge.toString() }, 'x402 upto charge not collected: the facilitator refused and the chain shows nothing moved; the charge is booked as the owner\'s debt');
    await this.record(a, event);
  }

  private chainOf(a: X402AttemptRow, value = BigInt(a.amount_minor)) {
    return this.chain!.authorization({
      network: a.network, asset: a.requirements.asset, payer: a.payer, nonce: a.nonce, payTo: a.requirements.payTo, value,
    });
  }

  /**
   * The event folded onto the attempt, in one transaction with what an end moves: settled → the wallet credited with
   * exactly the authorization's value and the verdict fed to payment's workflow (the hold placed); refused → the
   * refusal fed to it (PaymentRejected). Undefined when another worker ended it first.
   */
  private record(a: X402AttemptRow, event: X402AttemptEvent, said?: SettleOutcome, mppReceipt?: Record<string, unknown>): Promise<X402AttemptLife | undefined> {
    return this.dataSource.transaction(async (m) => {
      const life = await X402Attempts.apply(m, a.intent_id, event, event.type === 'VerdictAwaited' ? this.backoffMs(a.tries) : 0);
      if (!life) return undefined;
      if (life.step === 'settled' || life.step === 'authorized') await this.holds.funded(m, a.request, fundingOf(a, life, said, mppReceipt), a.causation_id);
      if (life.step === 'refused' && event.type === 'Refused' && event.releaseNonce && life.scheme?.startsWith('mpp')) await this.mpp.release(m, a);
      if (life.step === 'refused') await this.holds.refused(m, a.request, await this.refusalOf(a, life.refusal ?? 'refused'), a.causation_id);
      if (life.step === 'uncollected') await this.wallets.reverse(m, { ownerId: a.request.ownerId, reference: `x402-upto:${a.intent_id}:uncollected`, amountMinor: BigInt(life.chargeMinor ?? '0'), asset: a.asset, intentId: a.intent_id });
      return life;
    });
  }

  /** PAYMENT_REQUIRED with a fresh requirement of the rail the agent paid by (x402's, or MPP's challenge). */
  private refusalOf(a: X402AttemptRow, reason: string) {
    const price = BigInt(a.amount_minor);
    return a.life.scheme === 'mpp' || a.life.scheme === 'mpp-authorize' ? this.mpp.refusal(a.request, price, reason) : this.payments.refusal(a.request, price, reason);
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

/**
 * What funded the hold, as the wallet is credited with it: an x402 settlement (exact) or authorization (upto), an MPP
 * charge or authorization (its receipt) — each under its own reference, once. Only money that moved repays a debt.
 */
function fundingOf(a: X402AttemptRow, life: X402AttemptLife, said: SettleOutcome | undefined, mppReceipt: Record<string, unknown> | undefined) {
  const deferred = life.step === 'authorized';
  const base = { amountMinor: BigInt(a.amount_minor), approved: a.approved, repayDebt: !deferred };
  if (life.scheme === 'mpp' || life.scheme === 'mpp-authorize') {
    return { ...base, reference: `${life.scheme}:${a.network}:${a.nonce}`, source: life.scheme, mppReceipt: mppReceipt ?? { reference: life.transaction } };
  }
  if (deferred) {
    return { ...base, reference: `x402-upto:${a.network}:${a.payer}:${a.nonce}`, source: 'x402-upto' as const, response: { success: true, transaction: '', network: a.network, payer: life.payer, scheme: 'upto' as const, authorized: a.amount_minor } };
  }
  return { ...base, reference: `x402:${a.network}:${a.nonce}`, source: 'x402' as const, response: responseOf(a, life.transaction!, said) };
}

/** What the agent is told: the chain's transaction, whatever the facilitator said (or did not say). */
function responseOf(a: X402AttemptRow, transaction: string, said?: SettleOutcome): SettleResponse {
  const payer = said?.kind === 'settled' && said.response.payer ? said.response.payer : a.payer;
  return { success: true, transaction, network: a.network, payer };
}

function now(): string {
  return new Date().toISOString();
}
