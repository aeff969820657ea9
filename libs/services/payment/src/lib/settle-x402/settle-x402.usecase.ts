import { Inject, Injectable, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { createLogger } from '@tollgate/observability';
import { PAYMENT, PAYMENT_OPTIONS } from '../payment.constants';
import { type PaymentOptions } from '../payment.options';
import { PlaceHoldUseCase } from '../place-hold/place-hold.usecase';
import { type SettleResponse, X402_FACILITATOR, type X402Facilitator } from '../x402/x402.types';
import { X402Attempts, type X402AttemptRow } from './x402-attempts.repository';
import { X402Payments } from './x402-payments';

/** Verify tries before an unreachable facilitator refuses the call (verify moves nothing, so giving up is safe). */
const VERIFY_TRIES = 5;

/**
 * The x402 steps after the CallRequested committed (issue 21 point 2), each its own short transaction, none open
 * while the facilitator is asked:
 *
 * 1. claim a due attempt (a lease: a worker that dies mid-step leaves it to the next one once the lease runs out);
 * 2. `verifying` → ask verify; invalid → refused (PaymentRejected); valid → record `settling` *before* settle;
 * 3. `settling` → ask settle with the call's payment-identifier; settled → credit exactly what settled and place the
 *    hold, with the attempt's outcome, in one transaction; refused → PaymentRejected; unknown (timeout, dropped, 5xx)
 *    → nothing credited, nothing refused, asked again with the same identifier (the facilitator answers the first
 *    settlement's outcome; the chain's nonce makes a second transfer impossible anyway) until it says which.
 *
 * So the payer is never debited without the credit (a settled transfer is always found and credited) and never
 * credited without the debit (only a settle the facilitator confirmed credits).
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
    if (a.state === 'verifying' && !(await this.verify(a))) return;
    await this.settle(a);
  }

  /** True when verified and recorded as settling; otherwise the attempt is refused or waits for its next try. */
  private async verify(a: X402AttemptRow): Promise<boolean> {
    if (Date.now() > Date.parse(a.request.deadlineAt)) {
      await this.refuse(a, 'call_deadline_passed');
      return false;
    }
    const v = await this.facilitator!.verify(a.payment, a.requirements);
    if (v.kind === 'invalid') {
      await this.refuse(a, v.reason);
      return false;
    }
    if (v.kind === 'unavailable') {
      if (a.tries >= VERIFY_TRIES) await this.refuse(a, 'facilitator_unavailable');
      else await X402Attempts.retryLater(this.dataSource, a.intent_id, this.backoffMs(a.tries), `verify: ${v.problem}`, false);
      this.logger.warn({ intentId: a.intent_id, problem: v.problem, tries: a.tries }, 'x402 facilitator unavailable for verify');
      return false;
    }
    // The exact scheme's payer is the authorization's signer; a facilitator that names none does not make it unknown.
    await X402Attempts.markSettling(this.dataSource, a.intent_id, (v.payer ?? a.payer).toLowerCase());
    return true;
  }

  private async settle(a: X402AttemptRow): Promise<void> {
    const s = await this.facilitator!.settle(a.payment, a.requirements);
    if (s.kind === 'settled') return this.settled(a, s.response);
    if (s.kind === 'refused') return this.refuse(a, s.reason);
    this.logger.warn({ intentId: a.intent_id, problem: s.problem, tries: a.tries }, 'x402 settlement outcome unknown; asking the facilitator again with the same payment identifier');
    await X402Attempts.retryLater(this.dataSource, a.intent_id, this.backoffMs(a.tries), `settle: ${s.problem}`, true);
  }

  private async settled(a: X402AttemptRow, response: SettleResponse): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      if (!(await X402Attempts.finish(m, a.intent_id, { settled: response }))) return;
      await this.placeHold.holdAfterSettlement(m, a.request, {
        amountMinor: BigInt(a.amount_minor), reference: `x402:${a.network}:${a.nonce}`, response, approved: a.approved,
      }, a.causation_id);
    });
  }

  private async refuse(a: X402AttemptRow, reason: string): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      if (!(await X402Attempts.finish(m, a.intent_id, { refused: reason }))) return;
      await this.placeHold.refuse(m, a.request, a.causation_id, this.payments.refusal(a.request, BigInt(a.amount_minor), reason));
    });
  }

  /** From the configured base, doubling, at most the configured ceiling (default 250 ms … 30 s). */
  private backoffMs(tries: number): number {
    const { baseMs = 250, maxMs = 30_000 } = this.options.x402Retry ?? {};
    return Math.min(baseMs * 2 ** Math.max(0, tries - 1), maxMs);
  }
}
