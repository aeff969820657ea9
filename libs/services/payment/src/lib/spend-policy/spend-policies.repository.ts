import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { PAYMENT } from '../payment.constants';

/** `payment.spend_policy`: an owner's rules for one of its agents (one row per owner and agent). */
export interface SpendPolicyRow {
  owner_id: string; agent_id: string; paused: boolean; spend_limit_minor: string | null; period: 'day' | 'week' | 'month';
  approval_threshold_minor: string | null; asset: string; updated_at: Date;
}

export type SpendPolicyFields = Pick<SpendPolicyRow, 'paused' | 'spend_limit_minor' | 'period' | 'approval_threshold_minor' | 'asset'>;

/** Reads and writes of spend policies by the admin API (the hold reads them in `place-hold/spend-facts.repository.ts`). */
@Injectable()
export class SpendPoliciesRepository {
  constructor(@InjectDataSource(PAYMENT) private readonly dataSource: DataSource) {}

  /** The agent's policy, replaced whole. */
  async save(ownerId: string, agentId: string, p: SpendPolicyFields): Promise<void> {
    await this.dataSource.query(
      `INSERT INTO payment.spend_policy (owner_id, agent_id, paused, spend_limit_minor, period, approval_threshold_minor, asset)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (owner_id, agent_id) DO UPDATE SET paused = EXCLUDED.paused, spend_limit_minor = EXCLUDED.spend_limit_minor, period = EXCLUDED.period,
         approval_threshold_minor = EXCLUDED.approval_threshold_minor, asset = EXCLUDED.asset, updated_at = now()`,
      [ownerId, agentId, p.paused, p.spend_limit_minor, p.period, p.approval_threshold_minor, p.asset],
    );
  }

  /** The agent's policy, if one was set. */
  async find(ownerId: string, agentId: string): Promise<SpendPolicyRow | undefined> {
    const rows = (await this.dataSource.query('SELECT * FROM payment.spend_policy WHERE owner_id = $1 AND agent_id = $2', [ownerId, agentId])) as SpendPolicyRow[];
    return rows[0];
  }
}
