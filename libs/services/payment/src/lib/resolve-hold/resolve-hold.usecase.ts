import { Inject, Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { Movements, repaidOf } from '@tollgate/accounting';
import { type CallEvent, evolve, initialState, isTerminal } from '@tollgate/call-life';
import { HoldReleased, money } from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { applyPosting } from '@tollgate/persistence';
import { Holds } from '../holds/holds.repository';
import { PAYMENT, PAYMENT_OUTBOX } from '../payment.constants';

/**
 * On CallSettled / CallRefunded: the pending hold is captured (payment's half
 * of the capture: held → clearing, any rest back to available) or voided
 * (held → available), exactly once — the status guard and the posting id
 * both make a redelivered outcome change nothing. Money coming back to an
 * owner repays a debt incurred meanwhile first (a chargeback while the hold
 * was pending): the debt is read, locked, with the hold's resolution.
 */
@Injectable()
export class ResolveHoldUseCase {
  constructor(@Inject(PAYMENT_OUTBOX) private readonly outbox: OutboxWriter) {}

  /**
   * The end of a call's money, as the model reads it: once the call is terminal (`isTerminal`), a settled call's hold is
   * captured for the settled amount and a refunded call's hold voided. Any other fact changes nothing here.
   */
  async resolve(manager: EntityManager, end: CallEvent): Promise<void> {
    const life = evolve(initialState(end.payload.intentId), end);
    if (!isTerminal(life)) return;
    if (life.settled) await this.capture(manager, life.settled.holdId, BigInt(life.settled.amount.amountMinor));
    else if (life.refunded) await this.void(manager, life.refunded.holdId);
  }

  async capture(manager: EntityManager, holdId: string, capturedMinor: bigint): Promise<void> {
    const hold = await Holds.resolve(manager, holdId, 'captured', capturedMinor);
    if (!hold) return;
    const captured = capturedMinor > hold.amount ? hold.amount : capturedMinor;
    const owed = hold.owedMinor;
    await applyPosting(manager, PAYMENT, `capture:${holdId}`, 'capture', Movements.capture(hold.ownerId, { minor: hold.amount, asset: hold.asset }, captured, owed), hold.intentId);
    await this.released(manager, holdId, hold, 'captured', captured, repaidOf(owed, hold.amount - captured));
  }

  async void(manager: EntityManager, holdId: string): Promise<void> {
    const hold = await Holds.resolve(manager, holdId, 'voided');
    if (!hold) return;
    const owed = hold.owedMinor;
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
}
