import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { accountKey, decideSpend, minuteStart, Movements, periodEnd, periodStart, slidingMinute, spendBuckets, type SpendVerdict } from '@tollgate/accounting';
import { callEvent, evolve, initialState } from '@tollgate/call-life';
import { type CallRequestedPayload, money, PaymentHeld, type PaymentHeldPayload, PaymentRejected, toMinor } from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { applyPosting, InsufficientBalance, trySavepoint } from '@tollgate/persistence';
import { PAYMENT, PAYMENT_OPTIONS, PAYMENT_OUTBOX } from '../payment.constants';
import { type PaymentOptions } from '../payment.options';
import { FundWalletUseCase } from '../fund-wallet/fund-wallet.usecase';
import { MppPayments } from '../mpp/mpp-payments';
import { X402Payments } from '../attempts/x402-payments';
import { type SettleResponse, X402_FACILITATOR, type X402Facilitator } from '../x402/x402.types';
import { Approvals } from '../approve-call/approvals.repository';
import { type CounterIncrement, Holds } from '../holds/holds.repository';
import { type Refusal } from '../refusal';
import { SpendFactsRepository } from './spend-facts.repository';

/**
 * On CallRequested: decide whether the call may spend (spend policy and the
 * platform's velocity rules, under a per-agent lock so concurrent calls of
 * one agent are counted one after another), then place a pending hold for
 * the price of the contract version being called — from the prepaid wallet,
 * or, once its settlement is confirmed, from an x402 payment credited to it first — or reject with the
 * matching code. The database decides concurrency: with balance B and N
 * simultaneous calls of price p, the guarded debit lets exactly ⌊B/p⌋ through.
 */
@Injectable()
export class PlaceHoldUseCase {
  constructor(
    @Inject(PAYMENT_OUTBOX) private readonly outbox: OutboxWriter,
    @Inject(PAYMENT_OPTIONS) private readonly options: PaymentOptions,
    @Inject(X402_FACILITATOR) private readonly facilitator: X402Facilitator | null,
    private readonly x402: X402Payments,
    private readonly wallets: FundWalletUseCase,
    private readonly mpp: MppPayments,
  ) {}

  /**
   * Decides on one CallRequested in its consumer transaction. An x402 payment is only recorded here ('x402-pending'):
   * verify and settle run after the commit (SettleX402UseCase), and the hold follows a confirmed settlement.
   */
  async execute(manager: EntityManager, request: CallRequestedPayload, causationId: string): Promise<void | 'x402-pending'> {
    const price = toMinor(request.price);
    await Holds.lockAgent(manager, request.agentId);
    const { verdict, approved, decided } = await this.spendVerdict(manager, request, price);
    // Already answered (a parked CallRequested refused, then re-driven): the answer stands, nothing is held.
    if (decided) return;
    if (!verdict.ok) {
      const details = verdict.code === 'MCP_APPROVAL_REQUIRED'
        ? { ...verdict.details, approvalId: await this.pendingApproval(manager, request, price) }
        : verdict.details;
      return this.refuse(manager, request, causationId, { code: verdict.code, message: verdict.message, retryable: verdict.retryable, details, ...(verdict.retryAfterMs !== undefined ? { retryAfterMs: verdict.retryAfterMs } : {}) });
    }
    const charged = verdict.free ? 0n : price;
    // A fixed price is paid by x402 `exact` (settled before the work); a metered tool by `upto` (its maximum authorized,
    // the charge collected after the effect).
    if (charged > 0n && (request.x402Payment || request.mppCredential)) {
      const refusal = request.x402Payment && request.mppCredential ? BOTH_RAILS
        : request.x402Payment ? await this.x402.begin(manager, request, charged, approved, causationId) : await this.mpp.begin(manager, request, charged, approved, causationId);
      return refusal ? this.refuse(manager, request, causationId, refusal) : 'x402-pending';
    }
    await this.hold(manager, request, { charged, free: verdict.free, approved }, causationId);
  }

  /**
   * The x402 payment of this call settled (confirmed by the facilitator): credit the wallet with exactly what was
   * settled, then place the hold — one transaction, under the agent's lock.
   */
  async holdAfterSettlement(manager: EntityManager, request: CallRequestedPayload, settled: OutsideFunding, causationId: string): Promise<void> {
    await Holds.lockAgent(manager, request.agentId);
    await this.wallets.credit(manager, {
      ownerId: request.ownerId, reference: settled.reference, source: settled.source, amountMinor: settled.amountMinor,
      asset: request.price.asset, intentId: request.intentId, repayDebt: settled.repayDebt,
    }, causationId);
    await this.hold(manager, request, {
      charged: settled.amountMinor, free: false, approved: settled.approved,
      ...(settled.response ? { x402Response: settled.response } : {}), ...(settled.mppReceipt ? { mppReceipt: settled.mppReceipt } : {}),
    }, causationId);
  }

  /** The hold itself: a posting (none for a free call), the approval used, the hold and charge rows, PaymentHeld. */
  private async hold(manager: EntityManager, request: CallRequestedPayload, h: { charged: bigint; free: boolean; approved: boolean; x402Response?: SettleResponse; mppReceipt?: Record<string, unknown> }, causationId: string): Promise<void> {
    const asset = request.price.asset;
    const holdId = randomUUID();
    // A paid call may find the wallet short, which must leave no trace: the hold's id is new, so its one guarded debit
    // runs before anything is written (no savepoint needed).
    if (h.charged > 0n) {
      try {
        await applyPosting(manager, PAYMENT, `hold:${holdId}`, 'hold', Movements.hold(request.ownerId, { minor: h.charged, asset }), request.intentId, { freshId: true });
      } catch (e) {
        if (!(e instanceof InsufficientBalance)) throw e;
        return this.refuse(manager, request, causationId, await this.noFunds(manager, request, h.charged));
      }
    }
    const held: PaymentHeldPayload = {
      intentId: request.intentId, holdId, ownerId: request.ownerId, amount: money(h.charged, asset),
      ...(h.free ? { free: true } : {}),
      ...(h.x402Response ? { x402PaymentResponse: { ...h.x402Response } } : {}),
      ...(h.mppReceipt ? { mppReceipt: h.mppReceipt } : {}),
      ...(request.metered ? { metered: request.metered } : {}),
    };
    await Holds.place(manager, {
      holdId,
      life: evolve(initialState(request.intentId), callEvent('PaymentHeld', held)),
      charge: { intent_id: request.intentId, owner_id: request.ownerId, agent_id: request.agentId, tool_id: request.toolId, arguments_hash: request.argumentsHash,
        amount_minor: h.charged.toString(), asset, free: h.free, outcome: 'held' },
      counters: countersOf(request, h.charged, h.free, new Date()),
      ...(h.approved ? { approval: { operationKey: request.operationKey ?? null } } : {}),
    });
    await this.outbox.append(manager, PaymentHeld, held, { causationId });
  }

  /**
   * This CallRequested could not be applied and is parked: the agent gets a final answer now instead of waiting on a
   * hold that never comes. The refusal is recorded as any other (its charge row, so a later re-drive changes nothing)
   * in a savepoint; when that write is what fails — the fault the park is about — or the message broke its contract,
   * the PaymentRejected alone is sent: the park's record keeps the decision, and a re-drive leaves it standing.
   */
  async refuseParked(manager: EntityManager, parked: { request?: CallRequestedPayload; intentId?: string; causationId?: string }): Promise<void> {
    const { request } = parked;
    if (request && (await trySavepoint(manager, 'parked_refusal', () => this.refuse(manager, request, parked.causationId, PARKED_REFUSAL)))) return;
    const intentId = parked.request?.intentId ?? parked.intentId;
    if (!intentId) return; // nothing names a call: nobody waits on it
    await this.outbox.append(manager, PaymentRejected, { intentId, ...rejectionOf(PARKED_REFUSAL) }, parked.causationId ? { causationId: parked.causationId } : {});
  }

  private async spendVerdict(manager: EntityManager, request: CallRequestedPayload, price: bigint): Promise<{ verdict: SpendVerdict; approved: boolean; decided: boolean }> {
    const now = new Date();
    const minute = minuteStart(now);
    const f = await SpendFactsRepository.load(manager, {
      intentId: request.intentId, ownerId: request.ownerId, agentId: request.agentId, toolId: request.toolId, argumentsHash: request.argumentsHash,
      operationKey: request.operationKey ?? null, asset: request.price.asset, debtAccount: accountKey({ kind: 'debt', ownerId: request.ownerId }),
      periodStarts: { day: periodStart('day', now), week: periodStart('week', now), month: periodStart('month', now) },
      minute, previousMinute: new Date(minute.getTime() - 60_000), repeatWindowMs: this.options.velocity.repeatWindowMs,
    });
    const verdict = decideSpend(f.policy, this.options.velocity, {
      price, asset: request.price.asset, debtMinor: f.debt > 0n ? f.debt : 0n,
      spentInPeriodMinor: f.spentInPeriod, periodEndsAt: periodEnd(f.policy.period, now),
      callsLastMinute: Number(slidingMinute(f.callsMinute, f.callsPreviousMinute, now)),
      spentLastMinuteMinor: slidingMinute(f.spentMinute, f.spentPreviousMinute, now), sameRequestInWindow: f.sameRequest,
      approved: f.approved, freeCallsUsedToday: f.freeToday, dayEndsAt: periodEnd('day', now), now,
      ...(request.freeCallsPerDay !== undefined ? { freeCallsPerDay: request.freeCallsPerDay } : {}),
    });
    return { verdict, approved: f.approved, decided: f.decided };
  }

  /** The approval request the owner decides on: one per agent, tool, arguments and operation key. */
  private pendingApproval(manager: EntityManager, request: CallRequestedPayload, price: bigint): Promise<string> {
    return Approvals.openRequest(manager, request.intentId, {
      owner_id: request.ownerId, agent_id: request.agentId, tool_id: request.toolId, arguments_hash: request.argumentsHash,
      operation_key: request.operationKey ?? null, amount_minor: price.toString(), asset: request.price.asset,
    });
  }

  /** No prepaid wallet at all → PAYMENT_REQUIRED with the x402 requirement; a wallet that is short → PAYMENT_INSUFFICIENT_FUNDS. */
  private async noFunds(manager: EntityManager, request: CallRequestedPayload, price: bigint): Promise<Refusal> {
    const asset = request.price.asset;
    const { hasWallet, available } = await Holds.walletOf(manager, request.ownerId, asset);
    // A metered tool is offered `upto` only (exact would settle the whole maximum up front), when the facilitator has it.
    const requirements = this.facilitator !== null && asset === this.options.x402.assetCode ? await this.x402.requirements(request, price) : undefined;
    const mpp = hasWallet ? undefined : await this.mpp.paymentRequired(request, price);
    if (!hasWallet && (requirements || mpp)) {
      return {
        code: 'PAYMENT_REQUIRED', retryable: true,
        message: 'This paid tool needs a payment: sign the x402 requirement returned and retry with it in _meta["x402/payment"], or pay the MPP challenge (_meta["org.paymentauth/payment-required"]).',
        details: { price: { amountMinor: price.toString(), asset } },
        ...(requirements ? { x402PaymentRequired: this.x402.required(request, requirements, 'payment required') } : {}),
        ...(mpp ? { mppPaymentRequired: mpp } : {}),
      };
    }
    return {
      code: 'PAYMENT_INSUFFICIENT_FUNDS', retryable: false,
      message: 'The prepaid balance does not cover this call. Top up, wait until the deposit is credited, then retry.',
      details: { price: { amountMinor: price.toString(), asset }, available: { amountMinor: available.toString(), asset } },
    };
  }

  /** Refuses the call: the charge row records it, PaymentRejected tells the gateway (nothing is held). */
  async refuse(manager: EntityManager, request: CallRequestedPayload, causationId: string | undefined, r: Refusal): Promise<void> {
    await Holds.recordRefusal(manager, {
      intent_id: request.intentId, owner_id: request.ownerId, agent_id: request.agentId, tool_id: request.toolId, arguments_hash: request.argumentsHash,
      asset: request.price.asset, outcome: 'rejected', code: r.code,
    });
    await this.outbox.append(manager, PaymentRejected, { intentId: request.intentId, ...rejectionOf(r) }, causationId ? { causationId } : {});
  }
}

/** Money from outside that funds one call's hold: credited to the wallet under its reference (once), then held. */
export interface OutsideFunding {
  amountMinor: bigint;
  reference: string;
  source: 'x402' | 'x402-upto' | 'mpp' | 'mpp-authorize';
  approved: boolean;
  /** Only money that moved repays a debt; an authorization is held whole. */
  repayDebt: boolean;
  response?: SettleResponse;
  mppReceipt?: Record<string, unknown>;
}

/** The counters a hold adds to: spend per day, week and month, the minute's calls and spend, and the tool's free calls of the day. */
function countersOf(r: CallRequestedPayload, amount: bigint, free: boolean, now: Date): CounterIncrement[] {
  return [
    ...spendBuckets(r.price.asset, amount, now),
    ...(free ? [{ kind: 'free' as const, bucket: periodStart('day', now), key: r.toolId, amount: 0n }] : []),
  ];
}

/** One call, one payment: an agent that sends both an x402 payment and an MPP credential is charged by neither. */
const BOTH_RAILS: Refusal = {
  code: 'PAYMENT_REQUIRED', retryable: true, details: { reason: 'one_payment_per_call', rails: ['x402', 'mpp'] },
  message: 'This call carried both an x402 payment and an MPP credential; nothing was charged. Retry with one of them.',
};

/** What payment answers for a call whose CallRequested it parked: refused for good, nothing held or charged. */
const PARKED_REFUSAL: Refusal = {
  code: 'INTERNAL_SERVER_ERROR', retryable: false,
  message: 'The platform could not process the payment of this call: no hold was placed and nothing was charged. This operation key keeps this answer; to try again, send a new key.',
  details: { charged: false }, final: true,
};

/** A refusal as PaymentRejected carries it (beside the call's intentId). */
function rejectionOf(r: Refusal) {
  return {
    code: r.code, message: r.message, retryable: r.retryable,
    ...(r.retryAfterMs !== undefined ? { retryAfterMs: r.retryAfterMs } : {}),
    ...(r.details ? { details: r.details } : {}),
    ...(r.x402PaymentRequired ? { x402PaymentRequired: r.x402PaymentRequired } : {}),
    ...(r.mppPaymentRequired ? { mppPaymentRequired: r.mppPaymentRequired } : {}),
    ...(r.final ? { final: true } : {}),
  };
}
