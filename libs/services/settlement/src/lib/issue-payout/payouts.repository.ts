import { type EntityManager } from 'typeorm';

/** `settlement.payout`: one payout of a provider's net for a period, per asset. */
export interface PayoutRow {
  payout_id: string; provider_id: string; period_start: Date; period_end: Date; asset: string; calls: number; gross_minor: string; fee_minor: string; net_minor: string;
}

/** Settled calls of a period not paid out yet, summed per asset. */
export interface DueRow { asset: string; calls: string; gross: string; fees: string; net: string }

/** One asset's line of a provider's statement. */
export interface StatementLineRow { asset: string; calls: string; gross: string; fees: string; net: string; refund_calls: string; refunds: string; paid: string }

type Executor = Pick<EntityManager, 'query'>;

/** The payout and statement statements over `settlement.verification`, `settlement.payout` and the payable balance. */
export const Payouts = {
  /** One payout at a time per provider (for this transaction): two concurrent requests never pay the same call twice. */
  async lockProvider(m: Executor, providerId: string): Promise<void> {
    await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`payout:${providerId}`]);
  },

  async due(m: Executor, providerId: string, from: Date, to: Date): Promise<DueRow[]> {
    return (await m.query(
      `SELECT asset, count(*) AS calls, sum(amount_minor) AS gross, sum(fee_minor) AS fees, sum(net_minor) AS net FROM settlement.verification
        WHERE provider_id = $1 AND state = 'settled' AND payout_id IS NULL AND closed_at >= $2 AND closed_at < $3 GROUP BY asset ORDER BY asset`,
      [providerId, from, to])) as DueRow[];
  },

  /** Marks the period's unpaid settled calls in one asset as paid by this payout, and records the payout — one statement. */
  async record(m: Executor, p: PayoutRow): Promise<void> {
    await m.query(
      `WITH paid AS (
         UPDATE settlement.verification SET payout_id = $1
          WHERE provider_id = $2 AND state = 'settled' AND payout_id IS NULL AND closed_at >= $3 AND closed_at < $4 AND asset = $5)
       INSERT INTO settlement.payout (payout_id, provider_id, period_start, period_end, asset, calls, gross_minor, fee_minor, net_minor)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
      [p.payout_id, p.provider_id, p.period_start, p.period_end, p.asset, p.calls, p.gross_minor, p.fee_minor, p.net_minor]);
  },

  async statementLines(m: Executor, providerId: string, from: Date, to: Date): Promise<StatementLineRow[]> {
    return (await m.query(
      `SELECT asset,
              count(*) FILTER (WHERE state = 'settled') AS calls,
              COALESCE(sum(amount_minor) FILTER (WHERE state = 'settled'), 0) AS gross,
              COALESCE(sum(fee_minor) FILTER (WHERE state = 'settled'), 0) AS fees,
              COALESCE(sum(net_minor) FILTER (WHERE state = 'settled'), 0) AS net,
              count(*) FILTER (WHERE state = 'refunded') AS refund_calls,
              COALESCE(sum(amount_minor) FILTER (WHERE state = 'refunded'), 0) AS refunds,
              COALESCE(sum(net_minor) FILTER (WHERE state = 'settled' AND payout_id IS NOT NULL), 0) AS paid
         FROM settlement.verification
        WHERE provider_id = $1 AND state IN ('settled', 'refunded') AND closed_at >= $2 AND closed_at < $3 AND asset IS NOT NULL
        GROUP BY asset ORDER BY asset`,
      [providerId, from, to])) as StatementLineRow[];
  },

  /** A settlement account's balance per asset. */
  async balances(m: Executor, account: string): Promise<{ asset: string; balance: string }[]> {
    return (await m.query('SELECT asset, balance FROM settlement.balance WHERE account = $1 ORDER BY asset', [account])) as { asset: string; balance: string }[];
  },
};
