import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { accountKey, minuteStart, periodStart } from '@tollgate/accounting';
import { type CallRequestedPayload, toMinor } from '@tollgate/contracts';
import { type CallInput } from '@tollgate/messaging';
import { X402Payments } from '../attempts/x402-payments';
import { Holds, walletKey } from '../holds/holds.repository';
import { MppPayments } from '../mpp/mpp-payments';
import { PAYMENT_OPTIONS } from '../payment.constants';
import { type PaymentOptions } from '../payment.options';
import { X402_FACILITATOR, type X402Facilitator } from '../x402/x402.types';
import { type BatchReads, type Offer, type RequestReads } from './hold-plan';
import { type RailCheck } from '../attempts/x402-payments';
import { SpendFactsRepository } from './spend-facts.repository';

/** A CallRequested of the batch, with the id of the event that carried it (the attempt's causation). */
interface Requested {
  request: CallRequestedPayload;
  eventId: string;
}

/**
 * Everything payment's decision on a batch of CallRequested reads, in the consumer's transaction: the agents' locks
 * (sorted, one statement), the wallets' available balances locked (so the decision sees what the debit will), each
 * call's spend facts, an outside payment's checks, and — only where the wallet may fall short — what a refusal offers.
 */
@Injectable()
export class HoldReads {
  constructor(
    @Inject(PAYMENT_OPTIONS) private readonly options: PaymentOptions,
    @Inject(X402_FACILITATOR) private readonly facilitator: X402Facilitator | null,
    private readonly x402: X402Payments,
    private readonly mpp: MppPayments,
  ) {}

  async read(m: EntityManager, inputs: readonly CallInput[], now = new Date()): Promise<BatchReads> {
    const requested = requestsOf(inputs);
    const agents = [...new Set(requested.map((r) => r.request.agentId))].sort();
    const available = await Holds.lockAgentsAndAvailable(m, agents, requested.map((r) => ({ ownerId: r.request.ownerId, asset: r.request.price.asset })));
    const asked = askedOf(requested);
    const requests: RequestReads[] = [];
    for (const { request, eventId } of requested) {
      const facts = await this.facts(m, request, now);
      const price = toMinor(request.price);
      const key = walletKey(request.ownerId, request.price.asset);
      const rail = !facts.decided && (request.x402Payment || request.mppCredential) ? await this.rail(m, request, price, facts.approved, eventId) : undefined;
      const mayFallShort = !facts.decided && !rail && (available.get(key) ?? 0n) < asked.get(key)!;
      requests.push({
        request, facts, holdId: randomUUID(), approvalId: facts.pendingApproval ?? request.intentId,
        ...(rail ? { rail } : {}), ...(mayFallShort ? { offer: await this.offer(m, request, price) } : {}),
      });
    }
    return { now, velocity: this.options.velocity, requests, available };
  }

  private facts(m: EntityManager, request: CallRequestedPayload, now: Date) {
    const minute = minuteStart(now);
    return SpendFactsRepository.load(m, {
      intentId: request.intentId, ownerId: request.ownerId, agentId: request.agentId, toolId: request.toolId, argumentsHash: request.argumentsHash,
      operationKey: request.operationKey ?? null, asset: request.price.asset, debtAccount: accountKey({ kind: 'debt', ownerId: request.ownerId }),
      periodStarts: { day: periodStart('day', now), week: periodStart('week', now), month: periodStart('month', now) },
      minute, previousMinute: new Date(minute.getTime() - 60_000), repeatWindowMs: this.options.velocity.repeatWindowMs,
    });
  }

  /** The outside payment's first step, checked (one rail per call: both is refused by the decision, unchecked). */
  private async rail(m: EntityManager, request: CallRequestedPayload, price: bigint, approved: boolean, eventId: string): Promise<RailCheck | undefined> {
    if (request.x402Payment && request.mppCredential) return undefined;
    return request.x402Payment ? this.x402.check(m, request, price, approved, eventId) : this.mpp.check(m, request, price, approved, eventId);
  }

  /** What a shortfall offers: x402's requirement (a metered tool: `upto` only, when the facilitator has it) and MPP's challenge to an owner without a wallet. */
  private async offer(m: EntityManager, request: CallRequestedPayload, price: bigint): Promise<Offer> {
    const { hasWallet } = await Holds.walletOf(m, request.ownerId, request.price.asset);
    const requirements = this.facilitator !== null && request.price.asset === this.options.x402.assetCode ? await this.x402.requirements(request, price) : undefined;
    const mpp = hasWallet ? undefined : await this.mpp.paymentRequired(request, price);
    return {
      hasWallet,
      ...(requirements ? { x402PaymentRequired: this.x402.required(request, requirements, 'payment required') } : {}),
      ...(mpp ? { mppPaymentRequired: mpp } : {}),
    };
  }
}

/** The batch's requests, one per call, in delivery order (a redelivery in the same batch is the same call). */
function requestsOf(inputs: readonly CallInput[]): Requested[] {
  const seen = new Set<string>();
  const out: Requested[] = [];
  for (const i of inputs) {
    if (i.event.type !== 'CallRequested' || seen.has(i.event.payload.intentId)) continue;
    seen.add(i.event.payload.intentId);
    // A CallRequested input's payload is its contract's (decoded and validated by the consumer).
    out.push({ request: i.payload as CallRequestedPayload, eventId: i.eventId });
  }
  return out;
}

/** What the batch asks of each wallet at most (every call's price): below it, no call can fall short. */
function askedOf(requested: readonly Requested[]): Map<string, bigint> {
  const asked = new Map<string, bigint>();
  for (const { request } of requested) {
    const key = walletKey(request.ownerId, request.price.asset);
    asked.set(key, (asked.get(key) ?? 0n) + toMinor(request.price));
  }
  return asked;
}
