import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { createLogger } from '@tollgate/observability';
import { PAYMENT, PAYMENT_OPTIONS } from '../payment.constants';
import { type PaymentOptions } from '../payment.options';
import { PlaceHoldUseCase } from '../place-hold/place-hold.usecase';
import { type ChainState, X402_CHAIN } from '../x402/chain-state';
import { type SettleOutcome, type SettleResponse, X402_FACILITATOR, type X402Facilitator } from '../x402/x402.types';
import { saysNonceUsed, settleStep, type SettleStep } from './settle-verdict';
import { X402Attempts, type X402AttemptRow } from './x402-attempts.repository';
import { X402Payments } from './x402-payments';

/** Verify tries before an unreachable facilitator refuses the call (verify moves nothing, so giving up is safe). */
const VERIFY_TRIES = 5;

/**
 * The x402 steps after the CallRequested committed, each its own short transaction, none open while the facilitator
 * or the chain is asked:
 *
 * 1. claim a due attempt (a lease: a worker that dies mid-step leaves it to the next one once the lease runs out);
 * 2. `verifying` → ask verify; invalid → refused (PaymentRejected); valid → record `settling` *before* settle;
 * 3. `settling` → ask settle with the call's payment-identifier, then the chain (`settleStep`): the money moved to us →
 *    credit exactly that and place the hold, in one transaction; the nonce unused and expired, or a first settle
 *    refused with the chain agreeing nothing moved → PaymentRejected; anything else (a timeout, "nonce already used",
 *    "settled" with no transfer on the chain yet, the chain unreadable) → nothing credited, nothing refused, the chain
 *    asked again later (and the facilitator only while the nonce is unused and valid).
 *
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
    private readonly placeHold: PlaceHoldUseCase,
    private readonly payments: X402Payments,
  ) {}

  onModuleInit(): void {
    if (!this.facilitator) return;
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
    if (this.stopped || !this.facilitator) return;
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
    if (a.state === 'settling') return this.settle(a, true);
    const next = await this.verify(a);
    if (next !== 'stop') await this.settle(a, next === 'ask-the-chain');
  }

  /**
   * Verified and recorded as settling ('settle'), or refused / left for its next try ('stop'). "Nonce already used" is
   * not a refusal: the payer may have used this very authorization to pay us already, so the chain is asked.
   */
  private async verify(a: X402AttemptRow): Promise<'settle' | 'ask-the-chain' | 'stop'> {
    if (Date.now() > Date.parse(a.request.deadlineAt)) {
      await this.refuse(a, 'call_deadline_passed');
      return 'stop';
    }
    const v = await this.facilitator!.verify(a.payment, a.requirements);
    if (v.kind === 'invalid' && !saysNonceUsed(v.reason)) {
      await this.refuse(a, v.reason);
      return 'stop';
    }
    if (v.kind === 'unavailable') {
      if (a.tries >= VERIFY_TRIES) await this.refuse(a, 'facilitator_unavailable');
      else await X402Attempts.retryLater(this.dataSource, a.intent_id, this.backoffMs(a.tries), `verify: ${v.problem}`, false);
      this.logger.warn({ intentId: a.intent_id, problem: v.problem, tries: a.tries }, 'x402 facilitator unavailable for verify');
      return 'stop';
    }
    // The exact scheme's payer is the authorization's signer; a facilitator that names none does not make it unknown.
    await X402Attempts.markSettling(this.dataSource, a.intent_id, ((v.kind === 'valid' ? v.payer : undefined) ?? a.payer).toLowerCase());
    return v.kind === 'valid' ? 'settle' : 'ask-the-chain';
  }

  /**
   * The settle step. A first settle is asked, then the chain; a retry (the attempt was already settling: an unknown
   * outcome, or a crash mid-settle) asks the chain first and the facilitator only while the nonce is unused and valid.
   */
  private async settle(a: X402AttemptRow, afterUnknown: boolean): Promise<void> {
    if (afterUnknown) {
      const first = settleStep(await this.chainOf(a), { validBefore: validBeforeOf(a), afterUnknown });
      if (first.kind !== 'settle') return this.apply(a, first);
    }
    const s = await this.facilitator!.settle(a.payment, a.requirements);
    await this.apply(a, settleStep(await this.chainOf(a), { settle: s, validBefore: validBeforeOf(a), afterUnknown }), s);
  }

  private chainOf(a: X402AttemptRow) {
    return this.chain!.authorization({
      network: a.network, asset: a.requirements.asset, payer: a.payer, nonce: a.nonce, payTo: a.requirements.payTo, value: BigInt(a.amount_minor),
    });
  }

  private async apply(a: X402AttemptRow, step: SettleStep, said?: SettleOutcome): Promise<void> {
    if (step.kind === 'credit') return this.settled(a, responseOf(a, step.transaction, said));
    if (step.kind === 'refuse') return this.refuse(a, step.reason, step.releaseNonce);
    const problem = step.kind === 'unknown' ? step.problem : 'settle: not asked yet';
    this.logger.warn({ intentId: a.intent_id, problem, tries: a.tries }, 'x402 settlement has no verdict from the chain yet; nothing credited or refused, asked again later');
    await X402Attempts.retryLater(this.dataSource, a.intent_id, this.backoffMs(a.tries), problem, true);
  }

  private async settled(a: X402AttemptRow, response: SettleResponse): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      if (!(await X402Attempts.finish(m, a.intent_id, { settled: response }))) return;
      await this.placeHold.holdAfterSettlement(m, a.request, {
        amountMinor: BigInt(a.amount_minor), reference: `x402:${a.network}:${a.nonce}`, response, approved: a.approved,
      }, a.causation_id);
    });
  }

  /** Refused; the nonce is given back only when nothing on the chain used it (`releaseNonce`). */
  private async refuse(a: X402AttemptRow, reason: string, releaseNonce = true): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      if (!(await X402Attempts.finish(m, a.intent_id, { refused: reason, releaseNonce }))) return;
      await this.placeHold.refuse(m, a.request, a.causation_id, this.payments.refusal(a.request, BigInt(a.amount_minor), reason));
    });
  }

  /** From the configured base, doubling, at most the configured ceiling (default 250 ms … 30 s). */
  private backoffMs(tries: number): number {
    const { baseMs = 250, maxMs = 30_000 } = this.options.x402Retry ?? {};
    return Math.min(baseMs * 2 ** Math.max(0, tries - 1), maxMs);
  }
}

/** The authorization's `validBefore` (unix seconds); a payload without one was refused before it was recorded. */
function validBeforeOf(a: X402AttemptRow): bigint {
  return BigInt(a.payment.payload.authorization.validBefore);
}

/** What the agent is told: the chain's transaction, whatever the facilitator said (or did not say). */
function responseOf(a: X402AttemptRow, transaction: string, said?: SettleOutcome): SettleResponse {
  const payer = said?.kind === 'settled' && said.response.payer ? said.response.payer : a.payer;
  return { success: true, transaction, network: a.network, payer };
}
