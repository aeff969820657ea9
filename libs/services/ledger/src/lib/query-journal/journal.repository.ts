import { type EntityManager } from 'typeorm';
import { decimalAmount, decimalsOf } from '@tollgate/contracts';
import { type JournalFilter, type JournalLine, type JournalPosition, whereOf } from './journal-query';

export interface AccountBalance { account: string; asset: string; balance: string }

interface LineRow {
  occurred_at: Date; recorded_at: Date; posting_id: string; seq: number; kind: string; intent_id: string | null; account: string; asset: string; amount: string;
  rail: string | null; charge: string | null; usage: { unit?: string; units?: string; unitPriceMinor?: string } | null;
}

const toLine = (r: LineRow): JournalLine => ({
  occurredAt: r.occurred_at.toISOString(), recordedAt: r.recorded_at.toISOString(), postingId: r.posting_id, seq: r.seq, kind: r.kind,
  intentId: r.intent_id, account: r.account, asset: r.asset, amountMinor: r.amount, amount: decimalAmount(BigInt(r.amount), r.asset),
  rail: r.rail, chargeMinor: r.charge, unit: r.usage?.unit ?? null, units: r.usage?.units ?? null, unitPriceMinor: r.usage?.unitPriceMinor ?? null,
});

/**
 * A line's call, from its timeline: the rail payment held it on and the settlement's charge and usage (one index
 * look-up each, by the line's intent).
 */
const CALL_OF_LINE = `
  LEFT JOIN LATERAL (SELECT t.payload FROM ledger.timeline_entry t WHERE t.intent_id = e.intent_id AND t.type = 'PaymentHeld' LIMIT 1) h ON TRUE
  LEFT JOIN LATERAL (SELECT t.payload FROM ledger.timeline_entry t WHERE t.intent_id = e.intent_id AND t.type = 'CallSettled' LIMIT 1) s ON TRUE`;
const CALL_COLUMNS = `CASE WHEN h.payload IS NULL THEN NULL WHEN h.payload ? 'x402PaymentResponse' THEN 'x402' WHEN h.payload ? 'mppReceipt' THEN 'mpp' WHEN (h.payload->>'free')::boolean THEN 'free' ELSE 'wallet' END AS rail,
  s.payload->'amount'->>'amountMinor' AS charge, s.payload->'usage' AS usage`;

/** Start of the UTC day of `t`. */
const dayStart = (t: Date) => new Date(Date.UTC(t.getUTCFullYear(), t.getUTCMonth(), t.getUTCDate()));

/** Which accounts a balance or statement covers: all, one owner's, one provider's. */
export type AccountScope = { all: true } | { ownerId: string } | { providerId: string };

/** The condition selecting a scope's rows, on the owner and provider columns both tables index (never a prefix scan). */
const scopeSql = (s: AccountScope, n: number): { sql: string; params: unknown[] } =>
  'all' in s ? { sql: 'TRUE', params: [] } : 'ownerId' in s ? { sql: `owner_id = $${n}`, params: [s.ownerId] } : { sql: `provider_id = $${n}`, params: [s.providerId] };

/** One owner's or one provider's figures (minor units of `asset`). */
export interface GroupSummary { ownerId?: string; providerId?: string; asset: string; decimals: number; calls: number; spent?: string; refunds?: string; earned?: string }

export interface DailySummary { day: string; asset: string; decimals: number; calls: number; volume: string; fees: string; providerPayables: string; refunds: string }

type Executor = Pick<EntityManager, 'query'>;

/** The journal's reads for finance: pages in the stable order, balances as of a time, statement lines. */
export const Journal = {
  /** Up to `limit` entries after `after`, in the stable order (effective time, posting, line). */
  async page(m: Executor, filter: JournalFilter, after: JournalPosition | undefined, limit: number): Promise<JournalLine[]> {
    const { sql, params } = whereOf(filter, after);
    const rows: LineRow[] = await m.query(
      `SELECT e.occurred_at, e.recorded_at, e.posting_id, e.seq, e.kind, e.intent_id, e.account, e.asset, e.amount::text AS amount, ${CALL_COLUMNS}
         FROM (SELECT * FROM ledger.journal_entry ${sql} ORDER BY occurred_at, posting_id, seq LIMIT ${Math.floor(limit)}) e ${CALL_OF_LINE}
        ORDER BY e.occurred_at, e.posting_id, e.seq`, params);
    return rows.map(toLine);
  },

  /**
   * Every account's balance (in scope) as of `asOf`, inclusive: the daily net movements before its day plus that day's
   * entries up to it — a few hundred rows at most per account, whatever the journal's size.
   */
  async balancesAsOf(m: Executor, scope: AccountScope, asOf: Date, inclusive = true): Promise<AccountBalance[]> {
    const s = scopeSql(scope, 3);
    return m.query(
      `SELECT account, asset, sum(s)::text AS balance FROM (
         SELECT account, asset, delta AS s FROM ledger.journal_day WHERE day < $1::date AND ${s.sql}
         UNION ALL
         SELECT account, asset, amount FROM ledger.journal_entry WHERE occurred_at >= $1 AND occurred_at ${inclusive ? '<=' : '<'} $2 AND ${s.sql}
       ) x GROUP BY account, asset ORDER BY account, asset`,
      [dayStart(asOf), asOf, ...s.params]);
  },

  /** Balances of everything before `t`, exclusive (a statement's opening at `from`, its closing at `to`). */
  balancesBefore(m: Executor, scope: AccountScope, t: Date): Promise<AccountBalance[]> {
    return Journal.balancesAsOf(m, scope, t, false);
  },

  /**
   * Per UTC day and asset over [from, to): paid calls captured, gross captured from owners, the platform's fees,
   * what providers earned (net) and what was refunded to owners (voided holds) — the console's overview charts.
   */
  async dailySummary(m: Executor, from: Date, to: Date): Promise<DailySummary[]> {
    const rows: Omit<DailySummary, 'decimals'>[] = await m.query(
      `SELECT to_char((occurred_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS day, asset,
              count(DISTINCT posting_id) FILTER (WHERE kind = 'capture')::int AS calls,
              COALESCE(sum(amount) FILTER (WHERE kind = 'capture' AND account = 'platform:clearing'), 0)::text AS volume,
              COALESCE(sum(amount) FILTER (WHERE account = 'platform:revenue'), 0)::text AS fees,
              COALESCE(sum(amount) FILTER (WHERE kind = 'settle' AND provider_id IS NOT NULL), 0)::text AS "providerPayables",
              COALESCE(sum(amount) FILTER (WHERE kind = 'void' AND account LIKE 'owner:%:available'), 0)::text AS refunds
         FROM ledger.journal_entry WHERE occurred_at >= $1 AND occurred_at < $2
        GROUP BY 1, 2 ORDER BY 1, 2`, [from, to]);
    return rows.map((r) => ({ ...r, decimals: decimalsOf(r.asset) }));
  },

  /**
   * Per owner over [from, to): paid calls captured, what they spent (captured from their held money) and what was
   * refunded to them. Per provider: calls settled and what they earned (net, credited to their payable).
   */
  async summaryBy(m: Executor, by: 'provider' | 'owner', from: Date, to: Date): Promise<GroupSummary[]> {
    const sql = by === 'owner'
      ? `SELECT owner_id AS id, asset, count(DISTINCT posting_id) FILTER (WHERE kind = 'capture')::int AS calls,
                COALESCE(-sum(amount) FILTER (WHERE kind = 'capture' AND account LIKE 'owner:%:held'), 0)::text AS spent,
                COALESCE(sum(amount) FILTER (WHERE kind = 'void' AND account LIKE 'owner:%:available'), 0)::text AS refunds
           FROM ledger.journal_entry WHERE occurred_at >= $1 AND occurred_at < $2 AND owner_id IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2`
      : `SELECT provider_id AS id, asset, count(DISTINCT posting_id) FILTER (WHERE kind = 'settle')::int AS calls,
                COALESCE(sum(amount) FILTER (WHERE kind = 'settle' AND account LIKE 'provider:%:payable'), 0)::text AS earned
           FROM ledger.journal_entry WHERE occurred_at >= $1 AND occurred_at < $2 AND provider_id IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2`;
    const rows: (Omit<GroupSummary, 'decimals' | 'ownerId' | 'providerId'> & { id: string })[] = await m.query(sql, [from, to]);
    return rows.map(({ id, ...r }) => ({ ...(by === 'owner' ? { ownerId: id } : { providerId: id }), ...r, decimals: decimalsOf(r.asset) }));
  },

  /** Every entry matching `filter`, in the stable order, fetched a page at a time (memory stays flat). */
  async *all(m: Executor, filter: JournalFilter, pageSize = 2000): AsyncGenerator<JournalLine> {
    let after: JournalPosition | undefined;
    for (;;) {
      const page = await Journal.page(m, filter, after, pageSize);
      yield* page;
      if (page.length < pageSize) return;
      const last = page[page.length - 1]!;
      after = { occurredAt: last.occurredAt, postingId: last.postingId, seq: last.seq };
    }
  },
};
