import { type DataSource, type EntityManager } from 'typeorm';
import { returnedRows } from '@tollgate/persistence';

/** One row of `payment.approval`: an owner's decision on one call above the agent's approval threshold. */
export interface ApprovalRow {
  approval_id: string;
  owner_id: string;
  agent_id: string;
  tool_id: string;
  arguments_hash: string;
  operation_key: string | null;
  amount_minor: string;
  asset: string;
  status: 'pending' | 'approved' | 'denied' | 'used';
  decided_by: string | null;
  decided_at: Date | null;
  used_by_intent: string | null;
  created_at: Date;
}

/** An approval as the admin API shows it. */
export interface ApprovalView {
  approvalId: string; ownerId: string; agentId: string; toolId: string; operationKey: string | null;
  amount: { amountMinor: string; asset: string }; status: ApprovalRow['status']; decidedBy: string | null; decidedAt: Date | null; createdAt: Date;
}

export type ApprovalRequest = Pick<ApprovalRow, 'owner_id' | 'agent_id' | 'tool_id' | 'arguments_hash' | 'operation_key' | 'amount_minor' | 'asset'>;

/** Every statement on `payment.approval`. */
export const Approvals = {
  /**
   * The pending request for this agent, tool, arguments and operation key — the one already open, or a new one with
   * `newId` — in one statement (the caller holds the agent's lock, so two calls cannot both open one).
   */
  async openRequest(m: EntityManager, newId: string, r: ApprovalRequest): Promise<string> {
    const [row]: { approval_id: string }[] = await m.query(
      `WITH open AS (SELECT approval_id FROM payment.approval
                      WHERE agent_id = $3 AND tool_id = $4 AND arguments_hash = $5 AND COALESCE(operation_key, '') = COALESCE($6, '') AND status = 'pending'),
            created AS (INSERT INTO payment.approval (approval_id, owner_id, agent_id, tool_id, arguments_hash, operation_key, amount_minor, asset)
                        SELECT $1, $2, $3, $4, $5, $6, $7, $8 WHERE NOT EXISTS (SELECT 1 FROM open) RETURNING approval_id)
       SELECT approval_id FROM open UNION ALL SELECT approval_id FROM created`,
      [newId, r.owner_id, r.agent_id, r.tool_id, r.arguments_hash, r.operation_key, r.amount_minor, r.asset],
    );
    return row!.approval_id;
  },

  /** The admin list: one owner's or everyone's, one status or `all`, oldest first. */
  async list(ds: DataSource, filter: { ownerId?: string; status: string }): Promise<ApprovalView[]> {
    return ds.query(
      `SELECT approval_id AS "approvalId", owner_id AS "ownerId", agent_id AS "agentId", tool_id AS "toolId", operation_key AS "operationKey",
              json_build_object('amountMinor', amount_minor::text, 'asset', asset) AS amount, status, decided_by AS "decidedBy", decided_at AS "decidedAt", created_at AS "createdAt"
         FROM payment.approval WHERE ($1::text IS NULL OR owner_id = $1) AND ($2 = 'all' OR status = $2) ORDER BY created_at`,
      [filter.ownerId ?? null, filter.status],
    );
  },

  /** The owner's decision on a pending request; false when no pending request has this id. */
  async decide(ds: DataSource, approvalId: string, status: 'approved' | 'denied', by: string): Promise<boolean> {
    const rows = returnedRows(await ds.query(
      `UPDATE payment.approval SET status = $2, decided_by = $3, decided_at = now() WHERE approval_id = $1 AND status = 'pending' RETURNING approval_id`,
      [approvalId, status, by],
    ));
    return rows.length > 0;
  },
};
