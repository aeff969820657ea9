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
import { VerificationRepository } from '../record-call-fact/verification.repository';

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

  private readonly verifications = new VerificationRepository();

  /** Returns how many calls were settled. Safe to run from several instances at once. */
  async execute(batch = 100): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      const due = await this.verifications.claimDue(manager, batch);
      const split = due.map((row) => ({ row, gross: BigInt(row.amount_minor), ...splitFee(BigInt(row.amount_minor), this.options.feeBps) }));
      await this.verifications.markSettled(manager, split.map(({ row, fee, net }) => ({ intentId: row.intent_id, fee, net })));
      for (const { row, gross, fee, net } of split) {
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
