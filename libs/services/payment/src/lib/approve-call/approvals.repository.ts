import { type DataSource, type EntityManager } from 'typeorm';
import { col, defineTable, returnedRows, type RowOf, select } from '@tollgate/persistence';

/** `payment.approval`: an owner's decision on one call above the agent's approval threshold. */
export const APPROVAL = defineTable('payment.approval', {
  approval_id: col.uuid().required(),
  owner_id: col.text().required(),
  agent_id: col.text().required(),
  tool_id: col.text().required(),
  arguments_hash: col.text().required(),
  operation_key: col.text().nullable(),
  amount_minor: col.bigint().required(),
  asset: col.text().required(),
  status: col.text<'pending' | 'approved' | 'denied' | 'used'>().required(),
  decided_by: col.text().nullable(),
  decided_at: col.timestamptz().nullable(),
  used_by_intent: col.uuid().nullable(),
  created_at: col.timestamptz().required(),
});
export type ApprovalRow = RowOf<typeof APPROVAL>;

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
    const [row] = await select(m, APPROVAL, ['approval_id'],
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
    const rows = await select(ds, APPROVAL, ['approval_id', 'owner_id', 'agent_id', 'tool_id', 'operation_key', 'amount_minor', 'asset', 'status', 'decided_by', 'decided_at', 'created_at'],
      `SELECT approval_id, owner_id, agent_id, tool_id, operation_key, amount_minor, asset, status, decided_by, decided_at, created_at
         FROM payment.approval WHERE ($1::text IS NULL OR owner_id = $1) AND ($2 = 'all' OR status = $2) ORDER BY created_at`,
      [filter.ownerId ?? null, filter.status]);
    return rows.map((r) => ({
      approvalId: r.approval_id, ownerId: r.owner_id, agentId: r.agent_id, toolId: r.tool_id, operationKey: r.operation_key,
      amount: { amountMinor: r.amount_minor, asset: r.asset }, status: r.status, decidedBy: r.decided_by, decidedAt: r.decided_at, createdAt: r.created_at,
    }));
  },

  /** The owner's decision on a pending request; false when no pending request has this id. */
  async decide(ds: DataSource, approvalId: string, status: 'approved' | 'denied', by: string): Promise<boolean> {
    const rows = returnedRows<unknown>(await ds.query(
      `UPDATE payment.approval SET status = $2, decided_by = $3, decided_at = now() WHERE approval_id = $1 AND status = 'pending' RETURNING approval_id`,
      [approvalId, status, by],
    ));
    return rows.length > 0;
  },
};
