import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { CallSettled, money } from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { SETTLEMENT, SETTLEMENT_OUTBOX } from '../settlement.constants';

/** Settles every call whose verification window has closed with a confirmed effect. */
@Injectable()
export class CloseVerificationUseCase {
  constructor(
    @InjectDataSource(SETTLEMENT) private readonly dataSource: DataSource,
    @Inject(SETTLEMENT_OUTBOX) private readonly outbox: OutboxWriter,
  ) {}

  /** Returns how many calls were settled. Safe to run from several instances at once. */
  async execute(batch = 100): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      const due: { intent_id: string; hold_id: string; amount_minor: string; asset: string; provider_id: string }[] = await manager.query(
        `SELECT intent_id, hold_id, amount_minor, asset, provider_id FROM settlement.verification
          WHERE state = 'open' AND effect = 'confirmed' AND due_at <= now() AND hold_id IS NOT NULL AND provider_id IS NOT NULL
          ORDER BY due_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [batch],
      );
      for (const row of due) {
        await manager.query(`UPDATE settlement.verification SET state = 'settled', closed_at = now() WHERE intent_id = $1`, [row.intent_id]);
        await this.outbox.append(manager, CallSettled, {
          intentId: row.intent_id,
          holdId: row.hold_id,
          providerId: row.provider_id,
          amount: money(BigInt(row.amount_minor), row.asset),
        });
      }
      return due.length;
    });
  }
}
