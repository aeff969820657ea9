import { type EntityManager } from 'typeorm';
import { col, defineTable, LEDGER_BALANCE, type RowOf, select } from '@tollgate/persistence';

/** `settlement.payout`: one payout of a provider's net for a period, per asset. */
export const PAYOUT = defineTable('settlement.payout', {
  payout_id: col.uuid().required(),
  provider_id: col.text().required(),
  period_start: col.timestamptz().required(),
  period_end: col.timestamptz().required(),
  asset: col.text().required(),
  calls: col.integer().required(),
  gross_minor: col.bigint().required(),
  fee_minor: col.bigint().required(),
  net_minor: col.bigint().required(),
  created_at: col.timestamptz().required(),
});
export type PayoutRow = Omit<RowOf<typeof PAYOUT>, 'created_at'>;

// Sums and counts come back as text (numeric and bigint): declared as such.
/** Settled calls of a period not paid out yet, summed per asset. */
const DUE = defineTable('(due)', { asset: col.text().required(), calls: col.bigint().required(), gross: col.bigint().required(), fees: col.bigint().required(), net: col.bigint().required() });
export type DueRow = RowOf<typeof DUE>;

/** One asset's line of a provider's statement. */
const STATEMENT_LINE = defineTable('(statement line)', { ...DUE.columns, refund_calls: col.bigint().required(), refunds: col.bigint().required(), paid: col.bigint().required() });
export type StatementLineRow = RowOf<typeof STATEMENT_LINE>;

type Executor = Pick<EntityManager, 'query'>;

/** The payout and statement statements over `settlement.verification`, `settlement.payout` and the payable balance. */
export const Payouts = {
  /** One payout at a time per provider (for this transaction): two concurrent requests never pay the same call twice. */
  async lockProvider(m: Executor, providerId: string): Promise<void> {
    await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`payout:${providerId}`]);
  },

  async due(m: Executor, providerId: string, from: Date, to: Date): Promise<DueRow[]> {
    return select(m, DUE, ['asset', 'calls', 'gross', 'fees', 'net'],
      `SELECT asset, count(*) AS calls, sum(amount_minor) AS gross, sum(fee_minor) AS fees, sum(net_minor) AS net FROM settlement.verification
        WHERE provider_id = $1 AND state = 'settled' AND payout_id IS NULL AND closed_at >= $2 AND closed_at < $3 GROUP BY asset ORDER BY asset`,
      [providerId, from, to]);
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
    return select(m, STATEMENT_LINE, ['asset', 'calls', 'gross', 'fees', 'net', 'refund_calls', 'refunds', 'paid'],
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
      [providerId, from, to]);
  },

  /** A settlement account's balance per asset. */
  async balances(m: Executor, account: string): Promise<{ asset: string; balance: string }[]> {
    return select(m, LEDGER_BALANCE, ['asset', 'balance'], 'SELECT asset, balance FROM settlement.balance WHERE account = $1 ORDER BY asset', [account]);
  },
};
