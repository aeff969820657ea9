import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type Entry, Movements } from '@tollgate/accounting';
import {
  type CallSettledPayload, type EventEnvelope, type HoldReleasedPayload, type PaymentHeldPayload, type PayoutIssuedPayload, type WalletChargedBackPayload,
  type WalletFundedPayload,
} from '@tollgate/contracts';

type Posting = { id: string; kind: string; intentId?: string; entries: Entry[] };

const m = (x: { amountMinor: string; asset: string }) => ({ minor: BigInt(x.amountMinor), asset: x.asset });

/**
 * Books each money event into the finance journal with the same movement
 * builders payment and settlement use (libs/accounting), from events that carry
 * what each service booked (the owner side from payment's events, the
 * provider side from settlement's), so the projection and the services' own
 * books cannot disagree. A posting's id names what it books: redelivery and
 * replay change nothing.
 */
@Injectable()
export class ProjectJournalUseCase {
  walletFunded(manager: EntityManager, e: EventEnvelope, p: WalletFundedPayload) {
    const repaid = p.repaidDebt ? BigInt(p.repaidDebt.amountMinor) : 0n;
    return this.book(manager, e, [{ id: `deposit:${p.reference}`, kind: 'deposit', entries: Movements.deposit(p.ownerId, m(p.amount), repaid) }]);
  }

  walletChargedBack(manager: EntityManager, e: EventEnvelope, p: WalletChargedBackPayload) {
    return this.book(manager, e, [{ id: `chargeback:${p.reference}`, kind: 'chargeback', entries: Movements.chargeback(p.ownerId, m(p.amount), BigInt(p.fromAvailable.amountMinor)) }]);
  }

  paymentHeld(manager: EntityManager, e: EventEnvelope, p: PaymentHeldPayload) {
    return this.book(manager, e, [{ id: `hold:${p.holdId}`, kind: 'hold', intentId: p.intentId, entries: Movements.hold(p.ownerId, m(p.amount)) }]);
  }

  /** Payment's half: the hold captured into clearing or voided, released money repaying debt first. */
  holdReleased(manager: EntityManager, e: EventEnvelope, p: HoldReleasedPayload) {
    const held = m(p.held);
    const repaid = BigInt(p.repaidDebt.amountMinor);
    const entries = p.outcome === 'captured' ? Movements.capture(p.ownerId, held, BigInt(p.captured.amountMinor), repaid) : Movements.void(p.ownerId, held, repaid);
    return this.book(manager, e, [{ id: `${p.outcome === 'captured' ? 'capture' : 'void'}:${p.holdId}`, kind: p.outcome === 'captured' ? 'capture' : 'void', intentId: p.intentId, entries }]);
  }

  /** Settlement's half: clearing → provider payable (net) + platform revenue (fee). */
  callSettled(manager: EntityManager, e: EventEnvelope, p: CallSettledPayload) {
    if (!p.fee) return Promise.resolve(); // settled before issue 5: no split to book
    return this.book(manager, e, [{ id: `settle:${p.holdId}`, kind: 'settle', intentId: p.intentId, entries: Movements.settle(p.providerId, m(p.amount), BigInt(p.fee.amountMinor)) }]);
  }

  payoutIssued(manager: EntityManager, e: EventEnvelope, p: PayoutIssuedPayload) {
    return this.book(manager, e, [{ id: `payout:${p.payoutId}`, kind: 'payout', entries: Movements.payout(p.providerId, m(p.amount)) }]);
  }

  private async book(manager: EntityManager, envelope: EventEnvelope, postings: Posting[]): Promise<void> {
    for (const p of postings) {
      for (const [seq, entry] of p.entries.filter((x) => x.amount !== 0n).entries()) {
        await manager.query(
          `INSERT INTO ledger.journal_entry (posting_id, seq, kind, intent_id, account, asset, amount, occurred_at, event_id)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
          [p.id, seq, p.kind, p.intentId ?? null, entry.account, entry.asset, entry.amount.toString(), envelope.occurredAt, envelope.eventId],
        );
      }
    }
  }
}
