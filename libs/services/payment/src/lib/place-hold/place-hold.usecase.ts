import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { accountKey, type CounterKind, decideSpend, minuteStart, Movements, periodEnd, periodStart, slidingMinute, type AgentSpendPolicy, type SpendVerdict } from '@tollgate/accounting';
import { type CallRequestedPayload, money, PaymentHeld, PaymentRejected, toMinor } from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { applyPosting, balanceOf, InsufficientBalance } from '@tollgate/persistence';
import { PAYMENT, PAYMENT_OPTIONS, PAYMENT_OUTBOX } from '../payment.constants';
import { type PaymentOptions } from '../payment.options';
import { FundWalletUseCase } from '../fund-wallet/fund-wallet.usecase';
import { X402Payments } from '../settle-x402/x402-payments';
import { paymentRequired } from '../x402/payment-required';
import { type SettleResponse, X402_FACILITATOR, type X402Facilitator } from '../x402/x402.types';
import { type Refusal } from './refusal';

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
  ) {}

  /**
   * Decides on one CallRequested in its consumer transaction. An x402 payment is only recorded here ('x402-pending'):
   * verify and settle run after the commit (SettleX402UseCase), and the hold follows a confirmed settlement.
   */
  async execute(manager: EntityManager, request: CallRequestedPayload, causationId: string): Promise<void | 'x402-pending'> {
    const price = toMinor(request.price);
    await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`payment-agent:${request.agentId}`]);

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
    if (charged > 0n && request.x402Payment) {
      const refusal = await this.x402.begin(manager, request, charged, approved, causationId);
      return refusal ? this.refuse(manager, request, causationId, refusal) : 'x402-pending';
    }
    await this.hold(manager, request, { charged, free: verdict.free, approved }, causationId);
  }

  /**
   * The x402 payment of this call settled (confirmed by the facilitator): credit the wallet with exactly what was
   * settled, then place the hold — one transaction, under the agent's lock.
   */
  async holdAfterSettlement(manager: EntityManager, request: CallRequestedPayload, settled: { amountMinor: bigint; reference: string; response: SettleResponse; approved: boolean }, causationId: string): Promise<void> {
    await manager.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`payment-agent:${request.agentId}`]);
    await this.wallets.credit(manager, { ownerId: request.ownerId, reference: settled.reference, source: 'x402', amountMinor: settled.amountMinor, asset: request.price.asset, intentId: request.intentId }, causationId);
    await this.hold(manager, request, { charged: settled.amountMinor, free: false, approved: settled.approved, x402Response: settled.response }, causationId);
  }

  /** The hold itself: a posting (none for a free call), the approval used, the hold and charge rows, PaymentHeld. */
  private async hold(manager: EntityManager, request: CallRequestedPayload, h: { charged: bigint; free: boolean; approved: boolean; x402Response?: SettleResponse }, causationId: string): Promise<void> {
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
    if (h.approved) {
      await manager.query(
        `UPDATE payment.approval SET status = 'used', used_by_intent = $5
          WHERE agent_id = $1 AND tool_id = $2 AND arguments_hash = $3 AND COALESCE(operation_key, '') = COALESCE($4, '') AND status = 'approved'`,
        [request.agentId, request.toolId, request.argumentsHash, request.operationKey ?? null, request.intentId],
      );
    }
    await manager.query(
      'INSERT INTO payment.hold (hold_id, intent_id, owner_id, amount_minor, asset) VALUES ($1, $2, $3, $4, $5)',
      [holdId, request.intentId, request.ownerId, h.charged.toString(), asset],
    );
    await this.recordCharge(manager, request, h.charged, h.free, 'held');
    await this.outbox.append(manager, PaymentHeld, {
      intentId: request.intentId, holdId, ownerId: request.ownerId, amount: money(h.charged, asset),
      ...(h.free ? { free: true } : {}),
      ...(h.x402Response ? { x402PaymentResponse: { ...h.x402Response } } : {}),
    }, { causationId });
  }

  /**
   * Issue 21 point 3: this CallRequested could not be applied and is parked. The agent gets a final answer now instead
   * of waiting on a hold that never comes: refused, nothing held, recorded so that a later re-drive changes nothing.
   */
  async refuseParked(manager: EntityManager, request: CallRequestedPayload, causationId: string): Promise<void> {
    await this.refuse(manager, request, causationId, {
      code: 'INTERNAL_SERVER_ERROR', retryable: false,
      message: 'The platform could not process the payment of this call: no hold was placed and nothing was charged. This operation key keeps this answer; to try again, send a new key.',
      details: { charged: false }, final: true,
    });
  }

  private async spendVerdict(manager: EntityManager, request: CallRequestedPayload, price: bigint): Promise<{ verdict: SpendVerdict; approved: boolean; decided: boolean }> {
    const [row]: { paused: boolean; spend_limit_minor: string | null; period: AgentSpendPolicy['period']; approval_threshold_minor: string | null }[] = await manager.query(
      'SELECT paused, spend_limit_minor, period, approval_threshold_minor FROM payment.spend_policy WHERE owner_id = $1 AND agent_id = $2',
      [request.ownerId, request.agentId],
    );
    const policy: AgentSpendPolicy = {
      paused: row?.paused ?? false,
      period: row?.period ?? 'day',
      ...(row?.spend_limit_minor != null ? { spendLimitMinor: BigInt(row.spend_limit_minor) } : {}),
      ...(row?.approval_threshold_minor != null ? { approvalThresholdMinor: BigInt(row.approval_threshold_minor) } : {}),
    };
    const now = new Date();
    const rules = this.options.velocity;
    const minute = minuteStart(now);
    const previousMinute = new Date(minute.getTime() - 60_000);
    // Counters, not a scan of the agent's charges: a handful of primary-key lookups whatever the history (issue 11).
    const [f]: { spent_period: string; calls_minute: string; calls_prev: string; spent_minute: string; spent_prev: string; same_request: string; free_today: string; approved: boolean; debt: string; decided: boolean }[] = await manager.query(
      `WITH c AS (SELECT kind, bucket, key, calls, amount FROM payment.spend_counter
                   WHERE agent_id = $1 AND ((kind = $10 AND bucket = $4 AND key = $5) OR (kind = 'minute' AND bucket IN ($11, $12) AND key = $5)
                                            OR (kind = 'free' AND bucket = $7 AND key = $2)))
       SELECT
         COALESCE((SELECT amount FROM c WHERE kind = $10), 0) AS spent_period,
         COALESCE((SELECT calls FROM c WHERE kind = 'minute' AND bucket = $11), 0) AS calls_minute,
         COALESCE((SELECT calls FROM c WHERE kind = 'minute' AND bucket = $12), 0) AS calls_prev,
         COALESCE((SELECT amount FROM c WHERE kind = 'minute' AND bucket = $11), 0) AS spent_minute,
         COALESCE((SELECT amount FROM c WHERE kind = 'minute' AND bucket = $12), 0) AS spent_prev,
         COALESCE((SELECT calls FROM c WHERE kind = 'free'), 0) AS free_today,
         (SELECT count(*) FROM payment.charge WHERE agent_id = $1 AND tool_id = $2 AND arguments_hash = $3 AND outcome = 'held'
             AND created_at > now() - ($6::int * interval '1 millisecond')) AS same_request,
         EXISTS (SELECT 1 FROM payment.approval a WHERE a.agent_id = $1 AND a.tool_id = $2 AND a.arguments_hash = $3
                   AND COALESCE(a.operation_key, '') = COALESCE($8, '') AND a.status = 'approved') AS approved,
         COALESCE((SELECT -balance FROM payment.balance WHERE account = $9 AND asset = $5), 0) AS debt,
         EXISTS (SELECT 1 FROM payment.charge WHERE intent_id = $13) AS decided`,
      [request.agentId, request.toolId, request.argumentsHash, periodStart(policy.period, now), request.price.asset, rules.repeatWindowMs, periodStart('day', now),
        request.operationKey ?? null, accountKey({ kind: 'debt', ownerId: request.ownerId }), policy.period, minute, previousMinute, request.intentId],
    );
    const owed = BigInt(f!.debt);
    const verdict = decideSpend(policy, rules, {
      price, asset: request.price.asset, debtMinor: owed > 0n ? owed : 0n,
      spentInPeriodMinor: BigInt(f!.spent_period), periodEndsAt: periodEnd(policy.period, now),
      callsLastMinute: Number(slidingMinute(BigInt(f!.calls_minute), BigInt(f!.calls_prev), now)),
      spentLastMinuteMinor: slidingMinute(BigInt(f!.spent_minute), BigInt(f!.spent_prev), now), sameRequestInWindow: Number(f!.same_request),
      approved: f!.approved, freeCallsUsedToday: Number(f!.free_today), dayEndsAt: periodEnd('day', now), now,
      ...(request.freeCallsPerDay !== undefined ? { freeCallsPerDay: request.freeCallsPerDay } : {}),
    });
    return { verdict, approved: f!.approved, decided: f!.decided };
  }

  /** The approval request the owner decides on: one per agent, tool, arguments and operation key. */
  private async pendingApproval(manager: EntityManager, request: CallRequestedPayload, price: bigint): Promise<string> {
    const [existing]: { approval_id: string }[] = await manager.query(
      `SELECT approval_id FROM payment.approval WHERE agent_id = $1 AND tool_id = $2 AND arguments_hash = $3 AND COALESCE(operation_key, '') = COALESCE($4, '') AND status = 'pending'`,
      [request.agentId, request.toolId, request.argumentsHash, request.operationKey ?? null],
    );
    if (existing) return existing.approval_id;
    const approvalId = request.intentId;
    await manager.query(
      `INSERT INTO payment.approval (approval_id, owner_id, agent_id, tool_id, arguments_hash, operation_key, amount_minor, asset) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
      [approvalId, request.ownerId, request.agentId, request.toolId, request.argumentsHash, request.operationKey ?? null, price.toString(), request.price.asset],
    );
    return approvalId;
  }

  /** No prepaid wallet at all → PAYMENT_REQUIRED with the x402 requirement; a wallet that is short → PAYMENT_INSUFFICIENT_FUNDS. */
  private async noFunds(manager: EntityManager, request: CallRequestedPayload, price: bigint): Promise<Refusal> {
    const asset = request.price.asset;
    const [wallet]: { n: string }[] = await manager.query('SELECT count(*) AS n FROM payment.deposit WHERE owner_id = $1 AND asset = $2', [request.ownerId, asset]);
    const available = await balanceOf(manager, PAYMENT, accountKey({ kind: 'available', ownerId: request.ownerId }), asset);
    const canX402 = this.facilitator !== null && asset === this.options.x402.assetCode;
    if (Number(wallet!.n) === 0 && canX402) {
      return {
        code: 'PAYMENT_REQUIRED', retryable: true,
        message: 'This paid tool needs a payment: sign the x402 requirement returned and retry with it in _meta["x402/payment"].',
        details: { price: { amountMinor: price.toString(), asset } },
        x402PaymentRequired: paymentRequired(this.options.x402, request.toolName, price, 'payment required') as unknown as Record<string, unknown>,
      };
    }
    return {
      code: 'PAYMENT_INSUFFICIENT_FUNDS', retryable: false,
      message: 'The prepaid balance does not cover this call. Top up, wait until the deposit is credited, then retry.',
      details: { price: { amountMinor: price.toString(), asset }, available: { amountMinor: available.toString(), asset } },
    };
  }

  /** Refuses the call: the charge row records it, PaymentRejected tells the gateway (nothing is held). */
  async refuse(manager: EntityManager, request: CallRequestedPayload, causationId: string, r: Refusal): Promise<void> {
    await this.recordCharge(manager, request, 0n, false, 'rejected', r.code);
    await this.outbox.append(manager, PaymentRejected, {
      intentId: request.intentId, code: r.code, message: r.message, retryable: r.retryable,
      ...(r.retryAfterMs !== undefined ? { retryAfterMs: r.retryAfterMs } : {}),
      ...(r.details ? { details: r.details } : {}),
      ...(r.x402PaymentRequired ? { x402PaymentRequired: r.x402PaymentRequired } : {}),
      ...(r.final ? { final: true } : {}),
    }, { causationId });
  }

  private async recordCharge(manager: EntityManager, r: CallRequestedPayload, amount: bigint, free: boolean, outcome: 'held' | 'rejected', code?: string): Promise<void> {
    const recorded: unknown[] = await manager.query(
      `INSERT INTO payment.charge (intent_id, owner_id, agent_id, tool_id, arguments_hash, amount_minor, asset, free, outcome, code)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT DO NOTHING RETURNING 1`,
      [r.intentId, r.ownerId, r.agentId, r.toolId, r.argumentsHash, amount.toString(), r.price.asset, free, outcome, code ?? null],
    );
    if (recorded.length > 0 && outcome === 'held') await this.count(manager, r, amount, free);
  }

  /** A hold adds to the agent's counters (spend per day, week and month, the minute's calls and spend, free calls): one statement. */
  private async count(manager: EntityManager, r: CallRequestedPayload, amount: bigint, free: boolean): Promise<void> {
    const now = new Date();
    const rows: [CounterKind, Date, string, bigint][] = [
      ['day', periodStart('day', now), r.price.asset, amount], ['week', periodStart('week', now), r.price.asset, amount],
      ['month', periodStart('month', now), r.price.asset, amount], ['minute', minuteStart(now), r.price.asset, amount],
      ...(free ? [['free', periodStart('day', now), r.toolId, 0n] as [CounterKind, Date, string, bigint]] : []),
    ];
    await manager.query(
      `INSERT INTO payment.spend_counter AS s (agent_id, kind, bucket, key, calls, amount)
       SELECT $1, x.kind, x.bucket, x.key, 1, x.amount FROM unnest($2::text[], $3::timestamptz[], $4::text[], $5::bigint[]) AS x(kind, bucket, key, amount)
       ON CONFLICT (agent_id, kind, bucket, key) DO UPDATE SET calls = s.calls + 1, amount = s.amount + EXCLUDED.amount`,
      [r.agentId, rows.map((x) => x[0]), rows.map((x) => x[1]), rows.map((x) => x[2]), rows.map((x) => x[3].toString())],
    );
  }
}
