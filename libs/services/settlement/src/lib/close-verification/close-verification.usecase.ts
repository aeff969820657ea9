import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { Movements, splitFee } from '@tollgate/accounting';
import { CallSettled, money } from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { inRecordedContext } from '@tollgate/observability';
import { applyPosting } from '@tollgate/persistence';
import { SETTLEMENT, SETTLEMENT_OPTIONS, SETTLEMENT_OUTBOX } from '../settlement.constants';
import { type SettlementOptions } from '../settlement.options';

/**
 * Settles every call whose verification window has closed with a confirmed
 * effect: the captured price is split (platform fee floored to the minor
 * unit, the rest to the provider), settlement's half of the capture is booked
 * (clearing → payable + revenue) and CallSettled tells payment to book its
 * half (held → clearing) — in the same transaction, exactly once per call.
 */
@Injectable()
export class CloseVerificationUseCase {
  constructor(
    @InjectDataSource(SETTLEMENT) private readonly dataSource: DataSource,
    @Inject(SETTLEMENT_OUTBOX) private readonly outbox: OutboxWriter,
    @Inject(SETTLEMENT_OPTIONS) private readonly options: SettlementOptions,
  ) {}

  /** Returns how many calls were settled. Safe to run from several instances at once. */
  async execute(batch = 100): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      const due: { intent_id: string; hold_id: string; amount_minor: string; asset: string; provider_id: string; owner_id: string | null; trace_headers: Record<string, string> | null }[] = await manager.query(
        `SELECT intent_id, hold_id, amount_minor, asset, provider_id, owner_id, trace_headers FROM settlement.verification
          WHERE state = 'open' AND effect = 'confirmed' AND due_at <= now() AND hold_id IS NOT NULL AND provider_id IS NOT NULL
          ORDER BY due_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [batch],
      );
      for (const row of due) {
        const gross = BigInt(row.amount_minor);
        const { fee, net } = splitFee(gross, this.options.feeBps);
        await manager.query(
          `UPDATE settlement.verification SET state = 'settled', closed_at = now(), fee_minor = $2, net_minor = $3 WHERE intent_id = $1`,
          [row.intent_id, fee.toString(), net.toString()],
        );
        await applyPosting(manager, SETTLEMENT, `settle:${row.hold_id}`, 'settle', Movements.settle(row.provider_id, { minor: gross, asset: row.asset }, fee), row.intent_id);
        await inRecordedContext('settlement close verification', row.trace_headers, row.intent_id, () => this.outbox.append(manager, CallSettled, {
          intentId: row.intent_id,
          holdId: row.hold_id,
          providerId: row.provider_id,
          amount: money(gross, row.asset),
          fee: money(fee, row.asset),
          providerNet: money(net, row.asset),
          ...(row.owner_id ? { ownerId: row.owner_id } : {}),
        }));
      }
      return due.length;
    });
  }
}
