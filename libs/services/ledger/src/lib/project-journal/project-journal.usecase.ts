import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type Entry, Movements } from '@tollgate/accounting';
import {
  type CallRefundedPayload, type CallSettledPayload, type EventEnvelope, type PaymentHeldPayload, type PayoutIssuedPayload, type WalletFundedPayload,
} from '@tollgate/contracts';

type Posting = { id: string; kind: string; intentId?: string; entries: Entry[] };

const m = (x: { amountMinor: string; asset: string }) => ({ minor: BigInt(x.amountMinor), asset: x.asset });

/**
 * Books each money event into the finance journal with the same movement
 * builders payment and settlement use (libs/accounting), so the projection and
 * the services' own books cannot disagree. A posting's id names what it books:
 * redelivery and replay change nothing.
 */
@Injectable()
export class ProjectJournalUseCase {
  walletFunded(manager: EntityManager, e: EventEnvelope, p: WalletFundedPayload) {
    return this.book(manager, e, [{ id: `deposit:${p.reference}`, kind: 'deposit', entries: Movements.deposit(p.ownerId, m(p.amount)) }]);
  }

  paymentHeld(manager: EntityManager, e: EventEnvelope, p: PaymentHeldPayload) {
    return this.book(manager, e, [{ id: `hold:${p.holdId}`, kind: 'hold', intentId: p.intentId, entries: Movements.hold(p.ownerId, m(p.amount)) }]);
  }

  callSettled(manager: EntityManager, e: EventEnvelope, p: CallSettledPayload) {
    if (!p.ownerId || !p.fee) return Promise.resolve(); // settled before issue 5: no split to book
    const amount = m(p.amount);
    return this.book(manager, e, [
      { id: `capture:${p.holdId}`, kind: 'capture', intentId: p.intentId, entries: Movements.capture(p.ownerId, amount, amount.minor) },
      { id: `settle:${p.holdId}`, kind: 'settle', intentId: p.intentId, entries: Movements.settle(p.providerId, amount, BigInt(p.fee.amountMinor)) },
    ]);
  }

  callRefunded(manager: EntityManager, e: EventEnvelope, p: CallRefundedPayload) {
    if (!p.ownerId) return Promise.resolve();
    return this.book(manager, e, [{ id: `void:${p.holdId}`, kind: 'void', intentId: p.intentId, entries: Movements.void(p.ownerId, m(p.amount)) }]);
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
