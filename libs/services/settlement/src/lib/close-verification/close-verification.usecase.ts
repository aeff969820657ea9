import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import { Movements, splitFee } from '@tollgate/accounting';
import { type CallState, chargeOf, evolve, isSettlementDue, providerOf } from '@tollgate/call-life';
import { money } from '@tollgate/contracts';
import { appendEmission, type CallEmission, emittedFact, type OutboxWriter } from '@tollgate/messaging';
import { createLogger, inRecordedContext } from '@tollgate/observability';
import { applyPosting } from '@tollgate/persistence';
import { SETTLEMENT, SETTLEMENT_OPTIONS, SETTLEMENT_OUTBOX } from '../settlement.constants';
import { type SettlementOptions } from '../settlement.options';
import { type DueSettlement, Verifications } from '../record-call-fact/verification.repository';

const logger = createLogger(SETTLEMENT);

/**
 * Settles every call whose verification window has closed and that the model finds due (`isSettlementDue`): the
 * captured price is split (platform fee floored to the minor unit, the rest to `providerOf`), settlement's half of
 * the capture is booked (clearing → payable + revenue) and CallSettled tells payment to book its half (held →
 * clearing) — folded into the call's state in the same transaction, so it happens exactly once per call.
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
      const due = (await Verifications.claimDue(manager, batch)).filter((row) => isSettlementDue(row.life));
      const settled: { intentId: string; life: CallState }[] = [];
      for (const row of due) settled.push({ intentId: row.intent_id, life: await this.settle(manager, row) });
      await Verifications.saveLives(manager, settled);
      return settled.length;
    });
  }

  /** Books settlement's half and emits CallSettled, in the call's recorded trace; returns the state with it folded in. */
  private async settle(manager: EntityManager, row: DueSettlement): Promise<CallState> {
    const held = row.life.held!;
    // The charge: the hold at a fixed price; a metered call's units × unit price, at least its minimum, never past the hold.
    const charge = chargeOf(row.life)!;
    const gross = BigInt(charge.amount.amountMinor);
    const asset = held.amount.asset;
    const providerId = providerOf(row.life)!;
    const { fee, net } = splitFee(gross, this.options.feeBps);
    if (charge.flag) logger.warn({ intentId: row.intent_id, providerId, flag: charge.flag, charged: charge.amount.amountMinor }, 'a metered call\'s usage report needs a look: charged by the documented rule');
    await applyPosting(manager, SETTLEMENT, `settle:${held.holdId}`, 'settle', Movements.settle(providerId, { minor: gross, asset }, fee), row.intent_id);
    const settledEvent: CallEmission = {
      type: 'CallSettled',
      payload: {
        intentId: row.intent_id, holdId: held.holdId, providerId, amount: money(gross, asset), fee: money(fee, asset), providerNet: money(net, asset), ownerId: held.ownerId,
        // A metered call: how the charge was computed (the rest of the hold is released by payment: hold − amount).
        ...(charge.metered ? { usage: { ...charge.metered, ...(charge.flag ? { flag: charge.flag } : {}) } } : {}),
      },
    };
    await inRecordedContext('settlement close verification', row.trace_headers, row.intent_id, () => appendEmission(this.outbox, manager, settledEvent));
    return evolve(row.life, emittedFact(settledEvent));
  }
}
