import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import { accountKey, Movements } from '@tollgate/accounting';
import { money, PayoutIssued } from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { applyPosting } from '@tollgate/persistence';
import { SETTLEMENT, SETTLEMENT_OUTBOX } from '../settlement.constants';
import { Payouts } from './payouts.repository';

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
      await Payouts.lockProvider(m, providerId);
      const due = await Payouts.due(m, providerId, from, to);
      const payouts = [];
      for (const d of due) {
        const payoutId = randomUUID();
        const net = BigInt(d.net);
        await Payouts.record(m, {
          payout_id: payoutId, provider_id: providerId, period_start: from, period_end: to, asset: d.asset, calls: Number(d.calls), gross_minor: d.gross, fee_minor: d.fees, net_minor: d.net,
        });
        if (net > 0n) await applyPosting(m, SETTLEMENT, `payout:${payoutId}`, 'payout', Movements.payout(providerId, { minor: net, asset: d.asset }));
        await this.outbox.append(m, PayoutIssued, { payoutId, providerId, periodStart: from.toISOString(), periodEnd: to.toISOString(), amount: money(net, d.asset) });
        payouts.push({ payoutId, asset: d.asset, calls: Number(d.calls), amountMinor: net.toString() });
      }
      return { payouts, statement: await this.statementIn(m, providerId, from, to) };
    });
  }

  private async statementIn(m: EntityManager, providerId: string, from: Date, to: Date): Promise<Statement> {
    const rows = await Payouts.statementLines(m, providerId, from, to);
    const payable = await Payouts.balances(m, accountKey({ kind: 'payable', providerId }));
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
