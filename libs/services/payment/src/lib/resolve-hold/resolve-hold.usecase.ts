import { Inject, Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { Movements, repaidOf, spendBuckets } from '@tollgate/accounting';
import { type CallEvent, type CallState, evolve, isTerminal } from '@tollgate/call-life';
import { HoldReleased, money } from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { applyPosting } from '@tollgate/persistence';
import { FundWalletUseCase } from '../fund-wallet/fund-wallet.usecase';
import { type EndingHold, Holds } from '../holds/holds.repository';
import { PAYMENT, PAYMENT_OUTBOX } from '../payment.constants';
import { X402Attempts } from '../attempts/x402-attempts.repository';

/**
 * On CallSettled / CallRefunded: the open hold is captured (payment's half
 * of the capture: held → clearing, any rest back to available) or voided
 * (held → available), exactly once — the hold's state and the posting id
 * both make a redelivered outcome change nothing. Money coming back to an
 * owner repays a debt incurred meanwhile first (a chargeback while the hold
 * was pending): the debt is read, locked, with the hold's resolution.
 */
@Injectable()
export class ResolveHoldUseCase {
  constructor(@Inject(PAYMENT_OUTBOX) private readonly outbox: OutboxWriter, private readonly wallets: FundWalletUseCase) {}

  /**
   * The end of a call's money, as the model reads it: the end is folded into the hold's state; when that makes the
   * call terminal (`isTerminal`) and it was not before, a settled call's hold is captured for the settled amount and a
   * refunded call's hold voided. A redelivered end finds the state terminal already and changes nothing.
   */
  async resolve(manager: EntityManager, end: CallEvent): Promise<void> {
    if (end.type !== 'CallSettled' && end.type !== 'CallRefunded') return;
    const hold = await Holds.lockForEnd(manager, end.payload.holdId);
    if (!hold || isTerminal(hold.life)) return;
    const life = evolve(hold.life, end);
    if (life.settled) await this.capture(manager, hold, life, BigInt(life.settled.amount.amountMinor));
    else if (life.refunded) await this.void(manager, hold, life);
    // Funded by an authorization (x402 upto, MPP authorize): the charge is collected after the end.
    if (life.held?.x402PaymentResponse?.['scheme'] === 'upto' || life.held?.mppReceipt?.['intent'] === 'authorize') {
      await this.endAuthorization(manager, hold, life.settled ? capturedOf(hold, BigInt(life.settled.amount.amountMinor)) : undefined);
    }
  }

  /**
   * A hold funded by an x402 `upto` authorization: the call's end is the authorization's too. Captured → the charge is
   * left to collect (the worker settles it on chain) and the unused rest, released to the wallet by the capture, is
   * reversed: the payer never pays it. Refunded → the whole authorization is reversed, nothing is ever collected.
   * A redelivered end finds the attempt past `authorized` and changes nothing.
   */
  private async endAuthorization(manager: EntityManager, hold: EndingHold, captured: bigint | undefined): Promise<void> {
    const event = captured === undefined ? { type: 'Released' as const } : { type: 'Captured' as const, chargeMinor: captured };
    const attempt = await X402Attempts.apply(manager, hold.intentId, event);
    if (attempt?.scheme !== 'upto' && attempt?.scheme !== 'mpp-authorize') return;
    await this.wallets.reverse(manager, {
      ownerId: hold.ownerId, reference: `x402-upto:${hold.intentId}:unused`, amountMinor: hold.amount - (captured ?? 0n), asset: hold.asset, intentId: hold.intentId,
    });
  }

  private async capture(manager: EntityManager, hold: EndingHold, life: CallState, settledMinor: bigint): Promise<void> {
    const captured = capturedOf(hold, settledMinor);
    const owed = hold.owedMinor;
    await Holds.saveEnd(manager, hold.holdId, life, captured);
    if (captured < hold.amount && life.held?.metered) {
      await Holds.uncount(manager, hold.agentId, spendBuckets(hold.asset, hold.amount - captured, hold.createdAt));
    }
    await applyPosting(manager, PAYMENT, `capture:${hold.holdId}`, 'capture', Movements.capture(hold.ownerId, { minor: hold.amount, asset: hold.asset }, captured, owed), hold.intentId);
    await this.released(manager, hold.holdId, hold, 'captured', captured, repaidOf(owed, hold.amount - captured));
  }

  private async void(manager: EntityManager, hold: EndingHold, life: CallState): Promise<void> {
    const owed = hold.owedMinor;
    await Holds.saveEnd(manager, hold.holdId, life, null);
    await applyPosting(manager, PAYMENT, `void:${hold.holdId}`, 'void', Movements.void(hold.ownerId, { minor: hold.amount, asset: hold.asset }, owed), hold.intentId);
    await this.released(manager, hold.holdId, hold, 'voided', 0n, repaidOf(owed, hold.amount));
  }

  /** HoldReleased carries exactly what was booked, so the ledger's journal books the same entries. */
  private released(manager: EntityManager, holdId: string, hold: { intentId: string; ownerId: string; amount: bigint; asset: string }, outcome: 'captured' | 'voided', captured: bigint, repaid: bigint) {
    return this.outbox.append(manager, HoldReleased, {
      intentId: hold.intentId, holdId, ownerId: hold.ownerId, outcome,
      held: money(hold.amount, hold.asset), captured: money(captured, hold.asset), repaidDebt: money(repaid, hold.asset),
    });
  }
}

/** What a capture takes: the settled amount, never more than the hold. */
function capturedOf(hold: EndingHold, settledMinor: bigint): bigint {
  return settledMinor > hold.amount ? hold.amount : settledMinor;
}
