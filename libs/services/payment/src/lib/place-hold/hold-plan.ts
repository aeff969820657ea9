import { decideSpend, Movements, periodEnd, periodStart, slidingMinute, spendBuckets, type SpendVerdict, type VelocityRules } from '@tollgate/accounting';
import { type CallRequestedPayload, money, toMinor } from '@tollgate/contracts';
import { type Decision } from '@tollgate/messaging';
import { type ApprovalRequest } from '../approve-call/approvals.repository';
import { type AttemptCommand } from './attempt-steps';
import { type RailCheck } from '../attempts/x402-payments';
import { type X402AttemptLife } from '../attempts/x402-attempt.model';
import { type NewX402Attempt } from '../attempts/x402-attempts.repository';
import { type NewDeposit } from '../fund-wallet/deposits.repository';
import { type CounterIncrement, type NewCharge, walletKey } from '../holds/holds.repository';
import { BOTH_RAILS, type Refusal, rejectionOf } from '../refusal';
import { type SettleResponse } from '../x402/x402.types';
import { type SpendFacts } from './spend-facts.repository';

/** What a shortfall offers the agent: a payment requirement of each rail this gateway takes (none: top up). */
export interface Offer {
  /** The owner never had a prepaid wallet in the asset. */
  hasWallet: boolean;
  x402PaymentRequired?: Record<string, unknown>;
  mppPaymentRequired?: Record<string, unknown>;
}

/** Everything read for one CallRequested, under its agent's lock. */
export interface RequestReads {
  request: CallRequestedPayload;
  facts: SpendFacts;
  /** A new id for the hold, should one be placed. */
  holdId: string;
  /** The open approval request of this agent, tool, arguments and key, or the id a new one takes (the call's). */
  approvalId: string;
  /** The outside payment the request carries, checked (none when it carries none). */
  rail?: RailCheck;
  /** Read when the owner's wallet may fall short in this batch. */
  offer?: Offer;
}

/** A batch's reads: each request's, and the available balance of each owner's wallet, locked. */
export interface BatchReads {
  now: Date;
  velocity: VelocityRules;
  requests: readonly RequestReads[];
  available: ReadonlyMap<string, bigint>;
}

/** What payment writes for one call beside its events and postings (each part its own table). */
export interface PaymentWrites {
  held?: { holdId: string; charge: NewCharge; counters: CounterIncrement[]; approvalUsed?: { operationKey: string | null } };
  refused?: { charge: Omit<NewCharge, 'free' | 'amount_minor'> & { code: string }; openApproval?: { approvalId: string; request: ApprovalRequest } };
  /** An outside payment's attempt recorded (with MPP's credential claimed). */
  paying?: { attempt: NewX402Attempt; claim?: { key: string; expires: number } };
  /** Due work: the attempt leased to a step. */
  leased?: { leaseMs: number };
  /** A step's verdict: the attempt's next life (see `X402Attempts.saveLife`), and MPP's claim dropped when refused. */
  attempt?: { life: X402AttemptLife; keepLease: boolean; retryInMs: number; releaseNonce: boolean; releaseClaim?: string };
  /** Money from outside credited to the wallet, once under its reference. */
  deposit?: NewDeposit;
}

/** After commit: a step of an outside payment (the facilitator, the chain, MPP's backend). */
export type PaymentCommand = AttemptCommand;
export type PaymentDecision = Decision<PaymentCommand, PaymentWrites>;

/**
 * Payment's decision on a batch of CallRequested, pure: each call in delivery order, the spend policy over what was
 * read plus what the earlier calls of the batch counted (per agent) and spent (per wallet), so a batch decides
 * exactly what the same calls one transaction each would. A call already decided gets nothing.
 */
export function planHolds(batch: BatchReads): Map<string, PaymentDecision> {
  const tallies = new Map<string, Tally>();
  const available = new Map(batch.available);
  const plan = new Map<string, PaymentDecision>();
  for (const r of batch.requests) {
    const { intentId, agentId, ownerId, price } = r.request;
    if (plan.has(intentId)) continue;
    if (r.facts.decided) {
      plan.set(intentId, {});
      continue;
    }
    const tally = tallies.get(agentId) ?? newTally();
    const key = walletKey(ownerId, price.asset);
    const decision = decideRequest(r, tally, available.get(key) ?? 0n, batch);
    plan.set(intentId, decision);
    const { held, refused } = decision.extra ?? {};
    if (held) {
      tallies.set(agentId, counted(tally, r, held));
      available.set(key, (available.get(key) ?? 0n) - BigInt(held.charge.amount_minor));
    } else if (refused?.openApproval) {
      tallies.set(agentId, { ...tally, approvals: new Map(tally.approvals).set(requestKey(r.request), refused.openApproval.approvalId) });
    }
  }
  return plan;
}

function decideRequest(r: RequestReads, tally: Tally, available: bigint, batch: BatchReads): PaymentDecision {
  const price = toMinor(r.request.price);
  const approved = r.facts.approved && !tally.approvalsUsed.has(requestKey(r.request));
  const verdict = decideSpend(r.facts.policy, batch.velocity, figures(r, tally, approved, price, batch.now));
  if (!verdict.ok) return refusedBySpend(r, tally, verdict);
  const charged = verdict.free ? 0n : price;
  if (charged > 0n && (r.request.x402Payment || r.request.mppCredential)) {
    if (r.request.x402Payment && r.request.mppCredential) return refuse(r.request, BOTH_RAILS);
    if (!r.rail) throw new Error(`the outside payment of ${r.request.intentId} was not checked`);
    // Recorded due now: the runner's due work leases it to a step right after the commit.
    return 'refusal' in r.rail ? refuse(r.request, r.rail.refusal) : { extra: { paying: r.rail }, wakeInMs: 0 };
  }
  if (charged > available) return refuse(r.request, noFunds(r.offer ?? { hasWallet: true }, price, available, r.request.price.asset));
  return hold(r.request, { holdId: r.holdId, charged, free: verdict.free, approved, now: batch.now });
}

/** The spend figures of one call: the counters read, plus what the batch's earlier calls of the agent counted. */
function figures(r: RequestReads, tally: Tally, approved: boolean, price: bigint, now: Date) {
  const f = r.facts;
  const { request } = r;
  return {
    price, asset: request.price.asset, debtMinor: f.debt > 0n ? f.debt : 0n,
    spentInPeriodMinor: f.spentInPeriod + tally.spent, periodEndsAt: periodEnd(f.policy.period, now),
    callsLastMinute: Number(slidingMinute(f.callsMinute + BigInt(tally.calls), f.callsPreviousMinute, now)),
    spentLastMinuteMinor: slidingMinute(f.spentMinute + tally.spent, f.spentPreviousMinute, now),
    sameRequestInWindow: f.sameRequest + (tally.same.get(`${request.toolId}\u0000${request.argumentsHash}`) ?? 0),
    approved, freeCallsUsedToday: f.freeToday + (tally.free.get(request.toolId) ?? 0), dayEndsAt: periodEnd('day', now), now,
    ...(request.freeCallsPerDay !== undefined ? { freeCallsPerDay: request.freeCallsPerDay } : {}),
  };
}

function refusedBySpend(r: RequestReads, tally: Tally, verdict: Exclude<SpendVerdict, { ok: true }>): PaymentDecision {
  const base: Refusal = { code: verdict.code, message: verdict.message, retryable: verdict.retryable, details: verdict.details, ...(verdict.retryAfterMs !== undefined ? { retryAfterMs: verdict.retryAfterMs } : {}) };
  if (verdict.code !== 'MCP_APPROVAL_REQUIRED') return refuse(r.request, base);
  // One approval request per agent, tool, arguments and operation key: the one open (or opened earlier in this batch).
  const approvalId = tally.approvals.get(requestKey(r.request)) ?? r.approvalId;
  const { request } = r;
  const decision = refuse(request, { ...base, details: { ...verdict.details, approvalId } });
  const openApproval = {
    approvalId, request: {
      owner_id: request.ownerId, agent_id: request.agentId, tool_id: request.toolId, arguments_hash: request.argumentsHash,
      operation_key: request.operationKey ?? null, amount_minor: toMinor(request.price).toString(), asset: request.price.asset,
    },
  };
  return { ...decision, extra: { refused: { ...decision.extra!.refused!, openApproval } } };
}

/** The hold: a posting (none for a free call), the hold and charge rows, the counters, the approval used, PaymentHeld. */
export function hold(request: CallRequestedPayload, h: { holdId: string; charged: bigint; free: boolean; approved: boolean; now: Date; x402Response?: SettleResponse; mppReceipt?: Record<string, unknown> }): PaymentDecision {
  const asset = request.price.asset;
  const held = {
    intentId: request.intentId, holdId: h.holdId, ownerId: request.ownerId, amount: money(h.charged, asset),
    ...(h.free ? { free: true } : {}),
    ...(h.x402Response ? { x402PaymentResponse: { ...h.x402Response } } : {}),
    ...(h.mppReceipt ? { mppReceipt: h.mppReceipt } : {}),
    ...(request.metered ? { metered: request.metered } : {}),
  };
  return {
    // The hold's id is new and the wallet's row was read locked: its one guarded debit books it in one statement.
    postings: h.charged > 0n ? [{ id: `hold:${h.holdId}`, kind: 'hold', entries: Movements.hold(request.ownerId, { minor: h.charged, asset }), intentId: request.intentId, fresh: true }] : [],
    emit: [{ type: 'PaymentHeld', payload: held }],
    extra: { held: {
      holdId: h.holdId,
      charge: { intent_id: request.intentId, owner_id: request.ownerId, agent_id: request.agentId, tool_id: request.toolId, arguments_hash: request.argumentsHash,
        amount_minor: h.charged.toString(), asset, free: h.free, outcome: 'held' },
      counters: countersOf(request, h.charged, h.free, h.now),
      ...(h.approved ? { approvalUsed: { operationKey: request.operationKey ?? null } } : {}),
    } },
  };
}

/** Refuses the call: the charge row records it, PaymentRejected tells the gateway (nothing is held). */
export function refuse(request: CallRequestedPayload, r: Refusal): PaymentDecision {
  return {
    emit: [{ type: 'PaymentRejected', payload: { intentId: request.intentId, ...rejectionOf(r) } }],
    extra: { refused: {
      charge: { intent_id: request.intentId, owner_id: request.ownerId, agent_id: request.agentId, tool_id: request.toolId,
        arguments_hash: request.argumentsHash, asset: request.price.asset, outcome: 'rejected', code: r.code },
    } },
  };
}

/** No prepaid wallet and a rail to pay by → PAYMENT_REQUIRED with its requirements; otherwise PAYMENT_INSUFFICIENT_FUNDS. */
export function noFunds(offer: Offer, price: bigint, available: bigint, asset: string): Refusal {
  if (!offer.hasWallet && (offer.x402PaymentRequired || offer.mppPaymentRequired)) {
    return {
      code: 'PAYMENT_REQUIRED', retryable: true,
      message: 'This paid tool needs a payment: sign the x402 requirement returned and retry with it in _meta["x402/payment"], or pay the MPP challenge (_meta["org.paymentauth/payment-required"]).',
      details: { price: { amountMinor: price.toString(), asset } },
      ...(offer.x402PaymentRequired ? { x402PaymentRequired: offer.x402PaymentRequired } : {}),
      ...(offer.mppPaymentRequired ? { mppPaymentRequired: offer.mppPaymentRequired } : {}),
    };
  }
  return {
    code: 'PAYMENT_INSUFFICIENT_FUNDS', retryable: false,
    message: 'The prepaid balance does not cover this call. Top up, wait until the deposit is credited, then retry.',
    details: { price: { amountMinor: price.toString(), asset }, available: { amountMinor: available.toString(), asset } },
  };
}

/** The counters a hold adds to: spend per day, week and month, the minute's calls and spend, and the tool's free calls of the day. */
function countersOf(r: CallRequestedPayload, amount: bigint, free: boolean, now: Date): CounterIncrement[] {
  return [
    ...spendBuckets(r.price.asset, amount, now),
    ...(free ? [{ kind: 'free' as const, bucket: periodStart('day', now), key: r.toolId, amount: 0n }] : []),
  ];
}

/** What the batch's earlier holds of one agent counted (and the approvals they used or opened). */
interface Tally {
  spent: bigint;
  calls: number;
  same: ReadonlyMap<string, number>;
  free: ReadonlyMap<string, number>;
  approvalsUsed: ReadonlySet<string>;
  approvals: ReadonlyMap<string, string>;
}

function newTally(): Tally {
  return { spent: 0n, calls: 0, same: new Map(), free: new Map(), approvalsUsed: new Set(), approvals: new Map() };
}

function counted(t: Tally, r: RequestReads, held: NonNullable<PaymentWrites['held']>): Tally {
  const same = `${r.request.toolId}\u0000${r.request.argumentsHash}`;
  return {
    ...t, spent: t.spent + BigInt(held.charge.amount_minor), calls: t.calls + 1,
    same: new Map(t.same).set(same, (t.same.get(same) ?? 0) + 1),
    free: held.charge.free ? new Map(t.free).set(r.request.toolId, (t.free.get(r.request.toolId) ?? 0) + 1) : t.free,
    approvalsUsed: held.approvalUsed ? new Set(t.approvalsUsed).add(requestKey(r.request)) : t.approvalsUsed,
  };
}

/** An approval's key: the agent's tool, arguments and operation key. */
function requestKey(r: CallRequestedPayload): string {
  return `${r.toolId}\u0000${r.argumentsHash}\u0000${r.operationKey ?? ''}`;
}
