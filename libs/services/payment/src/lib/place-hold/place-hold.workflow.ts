import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import { type CallState, initialState } from '@tollgate/call-life';
import { type CallRequestedPayload } from '@tollgate/contracts';
import { applyResult, type CallInput, type CallWorkflow, type DecideInput, type LifeChange, LostRace, type OutboxWriter, type ParkedInput, type ResultInput } from '@tollgate/messaging';
import { Approvals } from '../approve-call/approvals.repository';
import { AttemptsWake } from '../attempts/attempts-wake';
import { X402Attempts } from '../attempts/x402-attempts.repository';
import { FundWalletUseCase } from '../fund-wallet/fund-wallet.usecase';
import { Holds } from '../holds/holds.repository';
import { MppReplays } from '../mpp/mpp-replay.repository';
import { PAYMENT, PAYMENT_OUTBOX } from '../payment.constants';
import { PARKED_REFUSAL, type Refusal, rejectionOf } from '../refusal';
import { type SettleResponse } from '../x402/x402.types';
import { type BatchReads, hold, noFunds, type PaymentCommand, type PaymentDecision, type PaymentWrites, planHolds, refuse } from './hold-plan';
import { HoldReads } from './hold-reads';

/** A call payment decided before (held, refused or paying by an outside rail); `life`: the hold's state, when held. */
export interface DecidedCall {
  life: CallState;
  /** Held or refused (false: an outside payment is being made, its verdict still to come). */
  charged: boolean;
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

/** What the outside payments' worker reports of a call it was paying for: the money arrived (and was credited), or refused. */
export type PaymentResult =
  | { intentId: string; kind: 'funded'; request: CallRequestedPayload; funding: OutsideFunding; available: bigint; holdId: string; at: Date }
  | { intentId: string; kind: 'refused'; request: CallRequestedPayload; refusal: Refusal };

/** The batch's reads and the decisions planned from them. */
interface Planned {
  reads: BatchReads;
  plan: Map<string, PaymentDecision>;
}

/**
 * Payment's share of a call's request, run by the workflow runner (the route's `spend policy` step): on CallRequested,
 * the spend policy and the platform's velocity rules decide whether the call may spend, then a pending hold is placed
 * for its price from the prepaid wallet — or the call is refused with the matching code, or its outside payment (x402,
 * MPP) is recorded for the attempts' worker, whose verdict comes back as a result (`decideResult`): the hold placed
 * from the money credited, or the refusal. `prepare` reads under the agents' locks with the wallets' rows locked, so
 * with balance B and N simultaneous calls of price p exactly ⌊B/p⌋ are held, in one batch or in N.
 */
@Injectable()
export class PlaceHoldWorkflow implements CallWorkflow<DecidedCall, PaymentCommand, PaymentWrites, Planned, PaymentResult> {
  readonly name = 'payment';
  readonly service = 'payment';
  readonly ledger = PAYMENT;
  readonly store;

  constructor(
    @Inject(PAYMENT_OUTBOX) readonly outbox: OutboxWriter,
    @InjectDataSource(PAYMENT) readonly dataSource: DataSource,
    private readonly reads: HoldReads,
    private readonly attempts: AttemptsWake,
    private readonly wallets: FundWalletUseCase,
  ) {
    this.store = {
      lock: async (m: EntityManager, ids: readonly string[]) =>
        new Map([...(await Holds.decided(m, ids))].map(([id, d]) => [id, { life: d.life ?? initialState(id), charged: d.charged }])),
      save: (m: EntityManager, changes: readonly LifeChange<DecidedCall, PaymentWrites>[]) => this.save(m, changes),
    };
  }

  async prepare(m: EntityManager, _lives: readonly CallState[], inputs: readonly CallInput[]): Promise<Planned> {
    const reads = await this.reads.read(m, inputs);
    return { reads, plan: planHolds(reads) };
  }

  decide({ before, life, context }: DecideInput<DecidedCall, Planned>): PaymentDecision {
    return before ? {} : context.plan.get(life.intentId) ?? {};
  }

  /** The attempts' worker's verdict: the money credited is held (short only when it repaid a debt first), or the call refused. */
  decideResult({ before, result }: ResultInput<DecidedCall, PaymentResult>): PaymentDecision {
    if (before?.charged) return {};
    if (result.kind === 'refused') return refuse(result.request, result.refusal);
    const { funding, request } = result;
    if (result.available < funding.amountMinor) return refuse(request, noFunds({ hasWallet: true }, funding.amountMinor, result.available, request.price.asset));
    return hold(request, {
      holdId: result.holdId, charged: funding.amountMinor, free: false, approved: funding.approved, now: result.at,
      ...(funding.response ? { x402Response: funding.response } : {}), ...(funding.mppReceipt ? { mppReceipt: funding.mppReceipt } : {}),
    });
  }

  /**
   * A CallRequested that could not be applied and is parked: the agent gets a final answer now instead of waiting on a
   * hold that never comes, recorded as any refusal (a later re-drive finds it decided). A call decided before keeps
   * its answer.
   */
  decideParked({ life, stored, payload }: ParkedInput): PaymentDecision {
    if (stored) return {};
    if (payload && 'agentId' in payload) return refuse(payload as CallRequestedPayload, PARKED_REFUSAL);
    return { emit: [{ type: 'PaymentRejected', payload: { intentId: life.intentId, ...rejectionOf(PARKED_REFUSAL) } }] };
  }

  run(): void {
    this.attempts.kick();
  }

  /**
   * An outside payment of this call arrived (the attempts' worker, in the transaction that ends its attempt): the
   * wallet credited with exactly what was paid, under its reference (once) and the agent's lock, then the verdict fed
   * through the runner — the hold placed from it.
   */
  async funded(m: EntityManager, request: CallRequestedPayload, funding: OutsideFunding, causationId: string): Promise<void> {
    await Holds.lockAgents(m, [request.agentId]);
    await this.wallets.credit(m, {
      ownerId: request.ownerId, reference: funding.reference, source: funding.source, amountMinor: funding.amountMinor,
      asset: request.price.asset, intentId: request.intentId, repayDebt: funding.repayDebt,
    }, causationId);
    const [available = 0n] = (await Holds.lockAvailable(m, [{ ownerId: request.ownerId, asset: request.price.asset }])).values();
    await applyResult(this, m, { intentId: request.intentId, kind: 'funded', request, funding, available, holdId: randomUUID(), at: new Date() }, causationId);
  }

  /** An outside payment of this call was refused: the refusal fed through the runner (PaymentRejected, nothing held). */
  async refused(m: EntityManager, request: CallRequestedPayload, refusal: Refusal, causationId: string): Promise<void> {
    await applyResult(this, m, { intentId: request.intentId, kind: 'refused', request, refusal }, causationId);
  }

  private async save(m: EntityManager, changes: readonly LifeChange<DecidedCall, PaymentWrites>[]): Promise<void> {
    for (const { life, extra } of changes) {
      if (extra?.kind === 'held') await Holds.place(m, { holdId: extra.holdId, life, charge: extra.charge, counters: extra.counters, ...(extra.approvalUsed ? { approvalUsed: extra.approvalUsed } : {}) });
      if (extra?.kind === 'refused') await Holds.recordRefusal(m, extra.charge);
      if (extra?.kind === 'refused' && extra.openApproval) await Approvals.openRequest(m, extra.openApproval.approvalId, extra.openApproval.request);
      if (extra?.kind === 'paying') await this.recordAttempt(m, extra);
    }
  }

  /** The outside payment's claim and attempt: read unused before the decision, so losing either is a race lost (retried). */
  private async recordAttempt(m: EntityManager, paying: Extract<PaymentWrites, { kind: 'paying' }>): Promise<void> {
    if (paying.claim && !(await MppReplays.tryClaim(m, paying.claim.key, paying.claim.expires))) throw new LostRace(`the MPP credential of ${paying.attempt.intent_id} was claimed by another call meanwhile`);
    if (!(await X402Attempts.record(m, paying.attempt))) throw new LostRace(`the payment nonce of ${paying.attempt.intent_id} was spent by another call meanwhile`);
  }
}
