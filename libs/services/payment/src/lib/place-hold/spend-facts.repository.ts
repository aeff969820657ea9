import { type EntityManager } from 'typeorm';
import { type AgentSpendPolicy } from '@tollgate/accounting';
import { col, defineTable, select } from '@tollgate/persistence';
import { SPEND_POLICY } from '../spend-policy/spend-policies.repository';

/** What one CallRequested asks about (the buckets are computed by the caller from one `now`). */
export interface SpendQuestion {
  intentId: string;
  ownerId: string;
  agentId: string;
  toolId: string;
  argumentsHash: string;
  operationKey: string | null;
  asset: string;
  debtAccount: string;
  /** The agent's policy period is unknown before the read: the start of each period, and the day's for free calls. */
  periodStarts: Record<AgentSpendPolicy['period'], Date>;
  minute: Date;
  previousMinute: Date;
  repeatWindowMs: number;
}

/** Everything the spend decision needs, read in one statement (counters, not a scan of the agent's history). */
export interface SpendFacts {
  policy: AgentSpendPolicy;
  spentInPeriod: bigint;
  callsMinute: bigint;
  callsPreviousMinute: bigint;
  spentMinute: bigint;
  spentPreviousMinute: bigint;
  freeToday: number;
  sameRequest: number;
  approved: boolean;
  debt: bigint;
  /** This intent was decided before (held, refused, or paying by an outside rail): a redelivery changes nothing. */
  decided: boolean;
  /** The open approval request of this agent, tool, arguments and operation key, if one is pending. */
  pendingApproval: string | null;
}

/** The one row of the facts statement: the agent's policy (null columns: none set) and the counts beside it. */
const FACTS = defineTable('(spend facts)', {
  paused: col.boolean().nullable(), spend_limit_minor: SPEND_POLICY.columns.spend_limit_minor,
  period: col.text<AgentSpendPolicy['period']>().nullable(), approval_threshold_minor: SPEND_POLICY.columns.approval_threshold_minor,
  spent_period: col.bigint().required(), calls_minute: col.integer().required(), calls_prev: col.integer().required(), spent_minute: col.bigint().required(),
  spent_prev: col.bigint().required(), free_today: col.integer().required(), same_request: col.bigint().required(), approved: col.boolean().required(),
  debt: col.bigint().required(), decided: col.boolean().required(), pending_approval: col.uuid().nullable(),
});
const FACT_COLUMNS = Object.keys(FACTS.columns) as (keyof typeof FACTS.columns)[];

/** The read behind payment's spend decision, over `payment.spend_policy`, `spend_counter`, `charge`, `approval` and `balance`. */
export const SpendFactsRepository = {
  async load(m: EntityManager, q: SpendQuestion): Promise<SpendFacts> {
    const [f] = await select(m, FACTS, FACT_COLUMNS,
      `WITH p AS (SELECT paused, spend_limit_minor, period, approval_threshold_minor FROM payment.spend_policy WHERE owner_id = $4 AND agent_id = $1),
            c AS (SELECT kind, calls, amount, bucket FROM payment.spend_counter
                   WHERE agent_id = $1 AND ((key = $5 AND ((kind = 'day' AND bucket = $12) OR (kind = 'week' AND bucket = $13) OR (kind = 'month' AND bucket = $14)
                                                           OR (kind = 'minute' AND bucket IN ($10, $11))))
                                            OR (kind = 'free' AND bucket = $12 AND key = $2)))
       SELECT p.paused, p.spend_limit_minor, p.period, p.approval_threshold_minor,
         COALESCE((SELECT amount FROM c WHERE kind = COALESCE(p.period, 'day')), 0) AS spent_period,
         COALESCE((SELECT calls FROM c WHERE kind = 'minute' AND bucket = $10), 0) AS calls_minute,
         COALESCE((SELECT calls FROM c WHERE kind = 'minute' AND bucket = $11), 0) AS calls_prev,
         COALESCE((SELECT amount FROM c WHERE kind = 'minute' AND bucket = $10), 0) AS spent_minute,
         COALESCE((SELECT amount FROM c WHERE kind = 'minute' AND bucket = $11), 0) AS spent_prev,
         COALESCE((SELECT calls FROM c WHERE kind = 'free'), 0) AS free_today,
         (SELECT count(*) FROM payment.charge WHERE agent_id = $1 AND tool_id = $2 AND arguments_hash = $3 AND outcome = 'held'
             AND created_at > now() - ($6::int * interval '1 millisecond')) AS same_request,
         EXISTS (SELECT 1 FROM payment.approval a WHERE a.agent_id = $1 AND a.tool_id = $2 AND a.arguments_hash = $3
                   AND COALESCE(a.operation_key, '') = COALESCE($7, '') AND a.status = 'approved') AS approved,
         COALESCE((SELECT -balance FROM payment.balance WHERE account = $8 AND asset = $5), 0) AS debt,
         EXISTS (SELECT 1 FROM payment.charge WHERE intent_id = $9) OR EXISTS (SELECT 1 FROM payment.x402_attempt WHERE intent_id = $9) AS decided,
         (SELECT a.approval_id FROM payment.approval a WHERE a.agent_id = $1 AND a.tool_id = $2 AND a.arguments_hash = $3
             AND COALESCE(a.operation_key, '') = COALESCE($7, '') AND a.status = 'pending' LIMIT 1) AS pending_approval
       FROM (SELECT 1) AS one LEFT JOIN p ON true`,
      [q.agentId, q.toolId, q.argumentsHash, q.ownerId, q.asset, q.repeatWindowMs, q.operationKey, q.debtAccount, q.intentId,
        q.minute, q.previousMinute, q.periodStarts.day, q.periodStarts.week, q.periodStarts.month],
    );
    return {
      policy: {
        paused: f!.paused ?? false,
        period: f!.period ?? 'day',
        ...(f!.spend_limit_minor != null ? { spendLimitMinor: BigInt(f!.spend_limit_minor) } : {}),
        ...(f!.approval_threshold_minor != null ? { approvalThresholdMinor: BigInt(f!.approval_threshold_minor) } : {}),
      },
      spentInPeriod: BigInt(f!.spent_period), callsMinute: BigInt(f!.calls_minute), callsPreviousMinute: BigInt(f!.calls_prev),
      spentMinute: BigInt(f!.spent_minute), spentPreviousMinute: BigInt(f!.spent_prev), freeToday: Number(f!.free_today),
      sameRequest: Number(f!.same_request), approved: f!.approved, debt: BigInt(f!.debt), decided: f!.decided, pendingApproval: f!.pending_approval,
    };
  },
};
