import { Inject, Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { accountKey, Movements, repaidOf } from '@tollgate/accounting';
import { HoldReleased, money } from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { applyPosting, balanceOf, returnedRows } from '@tollgate/persistence';
import { PAYMENT, PAYMENT_OUTBOX } from '../payment.constants';

/**
 * On CallSettled / CallRefunded: the pending hold is captured (payment's half
 * of the capture: held → clearing, any rest back to available) or voided
 * (held → available), exactly once — the status guard and the posting id
 * both make a redelivered outcome change nothing.
 */
@Injectable()
export class ResolveHoldUseCase {
  constructor(@Inject(PAYMENT_OUTBOX) private readonly outbox: OutboxWriter) {}

  async capture(manager: EntityManager, holdId: string, capturedMinor: bigint): Promise<void> {
    const hold = await this.resolve(manager, holdId, 'captured', capturedMinor);
    if (!hold) return;
    const captured = capturedMinor > hold.amount ? hold.amount : capturedMinor;
    const owed = await this.owed(manager, hold.ownerId, hold.asset);
    await applyPosting(manager, PAYMENT, `capture:${holdId}`, 'capture', Movements.capture(hold.ownerId, { minor: hold.amount, asset: hold.asset }, captured, owed), hold.intentId);
    await this.released(manager, holdId, hold, 'captured', captured, repaidOf(owed, hold.amount - captured));
  }

  async void(manager: EntityManager, holdId: string): Promise<void> {
    const hold = await this.resolve(manager, holdId, 'voided');
    if (!hold) return;
    const owed = await this.owed(manager, hold.ownerId, hold.asset);
    await applyPosting(manager, PAYMENT, `void:${holdId}`, 'void', Movements.void(hold.ownerId, { minor: hold.amount, asset: hold.asset }, owed), hold.intentId);
    await this.released(manager, holdId, hold, 'voided', 0n, repaidOf(owed, hold.amount));
  }

  /** HoldReleased carries exactly what was booked, so the ledger's journal books the same entries. */
  private released(manager: EntityManager, holdId: string, hold: { intentId: string; ownerId: string; amount: bigint; asset: string }, outcome: 'captured' | 'voided', captured: bigint, repaid: bigint) {
    return this.outbox.append(manager, HoldReleased, {
      intentId: hold.intentId, holdId, ownerId: hold.ownerId, outcome,
      held: money(hold.amount, hold.asset), captured: money(captured, hold.asset), repaidDebt: money(repaid, hold.asset),
    });
  }

  /** Money coming back to an owner repays a debt incurred meanwhile first (a chargeback while the hold was pending). */
  private async owed(manager: EntityManager, ownerId: string, asset: string): Promise<bigint> {
    const debt = await balanceOf(manager, PAYMENT, accountKey({ kind: 'debt', ownerId }), asset, true);
    return debt < 0n ? -debt : 0n;
  }

  private async resolve(manager: EntityManager, holdId: string, outcome: 'captured' | 'voided', captured?: bigint) {
    const [row] = returnedRows<{ intent_id: string; owner_id: string; amount_minor: string; asset: string }>(await manager.query(
      `UPDATE payment.hold SET status = $2, resolved_at = now(), captured_minor = $3 WHERE hold_id = $1 AND status = 'pending'
        RETURNING intent_id, owner_id, amount_minor, asset`,
      [holdId, outcome, captured?.toString() ?? null],
    ));
    return row && { intentId: row.intent_id, ownerId: row.owner_id, amount: BigInt(row.amount_minor), asset: row.asset };
  }
}
