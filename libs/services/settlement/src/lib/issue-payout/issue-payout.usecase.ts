import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import { accountKey, Movements } from '@tollgate/accounting';
import { money, PayoutIssued } from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { applyPosting } from '@tollgate/persistence';
import { SETTLEMENT, SETTLEMENT_OUTBOX } from '../settlement.constants';

export interface StatementLine {
  asset: string;
  calls: number;
  gross: string;
  fees: string;
  net: string;
  refunds: { calls: number; amount: string };
  /** Net of calls in this period already paid out, and still owed. */
  paid: string;
  unpaid: string;
}

export interface Statement {
  providerId: string;
  periodStart: string;
  periodEnd: string;
  lines: StatementLine[];
  payable: { asset: string; amountMinor: string }[];
}

interface LineRow { asset: string; calls: string; gross: string; fees: string; net: string; refund_calls: string; refunds: string; paid: string }

/**
 * A provider's statement for a period (calls settled in it, gross, platform
 * fees, refunds, net) and the payout of its unpaid net: payable → external,
 * once per call (each settled call is marked with the payout that paid it),
 * so a statement's net equals its payouts to the minor unit.
 */
@Injectable()
export class IssuePayoutUseCase {
  constructor(
    @InjectDataSource(SETTLEMENT) private readonly dataSource: DataSource,
    @Inject(SETTLEMENT_OUTBOX) private readonly outbox: OutboxWriter,
  ) {}

  statement(providerId: string, from: Date, to: Date): Promise<Statement> {
    return this.dataSource.transaction('REPEATABLE READ', (m) => this.statementIn(m, providerId, from, to));
  }

  /** Pays the unpaid net of the period, one payout per asset; nothing to pay → no payout. */
  async payout(providerId: string, from: Date, to: Date): Promise<{ payouts: { payoutId: string; asset: string; calls: number; amountMinor: string }[]; statement: Statement }> {
    return this.dataSource.transaction(async (m) => {
      // One payout at a time per provider: two concurrent requests never pay the same call twice.
      await m.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`payout:${providerId}`]);
      const due: { asset: string; calls: string; gross: string; fees: string; net: string }[] = await m.query(
        `SELECT asset, count(*) AS calls, sum(amount_minor) AS gross, sum(fee_minor) AS fees, sum(net_minor) AS net FROM settlement.verification
          WHERE provider_id = $1 AND state = 'settled' AND payout_id IS NULL AND closed_at >= $2 AND closed_at < $3 GROUP BY asset ORDER BY asset`,
        [providerId, from, to],
      );
      const payouts = [];
      for (const d of due) {
        const payoutId = randomUUID();
        const net = BigInt(d.net);
        await m.query(
          `UPDATE settlement.verification SET payout_id = $4
            WHERE provider_id = $1 AND state = 'settled' AND payout_id IS NULL AND closed_at >= $2 AND closed_at < $3 AND asset = $5`,
          [providerId, from, to, payoutId, d.asset],
        );
        await m.query(
          `INSERT INTO settlement.payout (payout_id, provider_id, period_start, period_end, asset, calls, gross_minor, fee_minor, net_minor)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
          [payoutId, providerId, from, to, d.asset, Number(d.calls), d.gross, d.fees, d.net],
        );
        if (net > 0n) await applyPosting(m, SETTLEMENT, `payout:${payoutId}`, 'payout', Movements.payout(providerId, { minor: net, asset: d.asset }));
        await this.outbox.append(m, PayoutIssued, { payoutId, providerId, periodStart: from.toISOString(), periodEnd: to.toISOString(), amount: money(net, d.asset) });
        payouts.push({ payoutId, asset: d.asset, calls: Number(d.calls), amountMinor: net.toString() });
      }
      return { payouts, statement: await this.statementIn(m, providerId, from, to) };
    });
  }

  private async statementIn(m: EntityManager, providerId: string, from: Date, to: Date): Promise<Statement> {
    const rows: LineRow[] = await m.query(
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
      [providerId, from, to],
    );
    const payable: { asset: string; balance: string }[] = await m.query(
      'SELECT asset, balance FROM settlement.balance WHERE account = $1 ORDER BY asset', [accountKey({ kind: 'payable', providerId })],
    );
    return {
      providerId, periodStart: from.toISOString(), periodEnd: to.toISOString(),
      lines: rows.map((r) => ({
        asset: r.asset, calls: Number(r.calls), gross: r.gross, fees: r.fees, net: r.net,
        refunds: { calls: Number(r.refund_calls), amount: r.refunds }, paid: r.paid, unpaid: (BigInt(r.net) - BigInt(r.paid)).toString(),
      })),
      payable: payable.map((p) => ({ asset: p.asset, amountMinor: p.balance })),
    };
  }
}
