import { type EntityManager } from 'typeorm';
import { type AgentSpendPolicy } from '@tollgate/accounting';
import { col, defineTable, type RowOf, select } from '@tollgate/persistence';

/** `payment.spend_policy`: an owner's rules for one of its agents (one row per owner and agent). */
export const SPEND_POLICY = defineTable('payment.spend_policy', {
  owner_id: col.text().required(),
  agent_id: col.text().required(),
  paused: col.boolean().required(),
  spend_limit_minor: col.bigint().nullable(),
  period: col.text<AgentSpendPolicy['period']>().required(),
  approval_threshold_minor: col.bigint().nullable(),
  asset: col.text().required(),
  updated_at: col.timestamptz().required(),
});
export type SpendPolicyRow = RowOf<typeof SPEND_POLICY>;

export type SpendPolicyFields = Pick<SpendPolicyRow, 'paused' | 'spend_limit_minor' | 'period' | 'approval_threshold_minor' | 'asset'>;

type Executor = Pick<EntityManager, 'query'>;

/** Reads and writes of spend policies by the admin API (the hold reads them in `place-hold/spend-facts.repository.ts`). */
export const SpendPolicies = {
  /** The agent's policy, replaced whole. */
  async save(m: Executor, ownerId: string, agentId: string, p: SpendPolicyFields): Promise<void> {
    await m.query(
      `INSERT INTO payment.spend_policy (owner_id, agent_id, paused, spend_limit_minor, period, approval_threshold_minor, asset)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (owner_id, agent_id) DO UPDATE SET paused = EXCLUDED.paused, spend_limit_minor = EXCLUDED.spend_limit_minor, period = EXCLUDED.period,
         approval_threshold_minor = EXCLUDED.approval_threshold_minor, asset = EXCLUDED.asset, updated_at = now()`,
      [ownerId, agentId, p.paused, p.spend_limit_minor, p.period, p.approval_threshold_minor, p.asset],
    );
  },

  /** The agent's policy, if one was set. */
  async find(m: Executor, ownerId: string, agentId: string): Promise<SpendPolicyRow | undefined> {
    const [row] = await select(m, SPEND_POLICY, Object.keys(SPEND_POLICY.columns) as (keyof SpendPolicyRow)[],
      'SELECT * FROM payment.spend_policy WHERE owner_id = $1 AND agent_id = $2', [ownerId, agentId]);
    return row;
  },
};
