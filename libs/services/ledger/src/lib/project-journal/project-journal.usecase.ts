import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type Entry, Movements } from '@tollgate/accounting';
import {
  CallSettled, type CallSettledPayload, type EventEnvelope, HoldReleased, type HoldReleasedPayload, PaymentHeld, type PaymentHeldPayload, PayoutIssued,
  type PayoutIssuedPayload, WalletChargedBack, type WalletChargedBackPayload, WalletFunded, type WalletFundedPayload,
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
  /** Books the event if it moves money (a no-op for every other event); `payload` was validated against its type on consume. */
  project(manager: EntityManager, e: EventEnvelope, payload: object): Promise<void> {
    switch (e.type) {
      case WalletFunded.type: return this.walletFunded(manager, e, payload as WalletFundedPayload);
      case WalletChargedBack.type: return this.walletChargedBack(manager, e, payload as WalletChargedBackPayload);
      case PaymentHeld.type: return this.paymentHeld(manager, e, payload as PaymentHeldPayload);
      case HoldReleased.type: return this.holdReleased(manager, e, payload as HoldReleasedPayload);
      case CallSettled.type: return this.callSettled(manager, e, payload as CallSettledPayload);
      case PayoutIssued.type: return this.payoutIssued(manager, e, payload as PayoutIssuedPayload);
      default: return Promise.resolve();
    }
  }

  private walletFunded(manager: EntityManager, e: EventEnvelope, p: WalletFundedPayload) {
    const repaid = p.repaidDebt ? BigInt(p.repaidDebt.amountMinor) : 0n;
    return this.book(manager, e, [{ id: `deposit:${p.reference}`, kind: 'deposit', entries: Movements.deposit(p.ownerId, m(p.amount), repaid) }]);
  }

  private walletChargedBack(manager: EntityManager, e: EventEnvelope, p: WalletChargedBackPayload) {
    return this.book(manager, e, [{ id: `chargeback:${p.reference}`, kind: 'chargeback', entries: Movements.chargeback(p.ownerId, m(p.amount), BigInt(p.fromAvailable.amountMinor)) }]);
  }

  private paymentHeld(manager: EntityManager, e: EventEnvelope, p: PaymentHeldPayload) {
    return this.book(manager, e, [{ id: `hold:${p.holdId}`, kind: 'hold', intentId: p.intentId, entries: Movements.hold(p.ownerId, m(p.amount)) }]);
  }

  /** Payment's half: the hold captured into clearing or voided, released money repaying debt first. */
  private holdReleased(manager: EntityManager, e: EventEnvelope, p: HoldReleasedPayload) {
    const held = m(p.held);
    const repaid = BigInt(p.repaidDebt.amountMinor);
    const entries = p.outcome === 'captured' ? Movements.capture(p.ownerId, held, BigInt(p.captured.amountMinor), repaid) : Movements.void(p.ownerId, held, repaid);
    return this.book(manager, e, [{ id: `${p.outcome === 'captured' ? 'capture' : 'void'}:${p.holdId}`, kind: p.outcome === 'captured' ? 'capture' : 'void', intentId: p.intentId, entries }]);
  }

  /** Settlement's half: clearing → provider payable (net) + platform revenue (fee). */
  private callSettled(manager: EntityManager, e: EventEnvelope, p: CallSettledPayload) {
    if (!p.fee) return Promise.resolve(); // settled before issue 5: no split to book
    return this.book(manager, e, [{ id: `settle:${p.holdId}`, kind: 'settle', intentId: p.intentId, entries: Movements.settle(p.providerId, m(p.amount), BigInt(p.fee.amountMinor)) }]);
  }

  private payoutIssued(manager: EntityManager, e: EventEnvelope, p: PayoutIssuedPayload) {
    return this.book(manager, e, [{ id: `payout:${p.payoutId}`, kind: 'payout', entries: Movements.payout(p.providerId, m(p.amount)) }]);
  }

  private async book(manager: EntityManager, envelope: EventEnvelope, postings: Posting[]): Promise<void> {
    // One multi-row insert for every entry of the event's postings (a replayed event changes nothing).
    const rows = postings.flatMap((p) => p.entries.filter((x) => x.amount !== 0n).map((entry, seq) => ({ p, seq, entry })));
    if (rows.length === 0) return;
    await manager.query(
      `INSERT INTO ledger.journal_entry (posting_id, seq, kind, intent_id, account, asset, amount, occurred_at, event_id)
       SELECT x.posting_id, x.seq, x.kind, x.intent_id, x.account, x.asset, x.amount, $8, $9
         FROM unnest($1::text[], $2::int[], $3::text[], $4::uuid[], $5::text[], $6::text[], $7::bigint[]) AS x(posting_id, seq, kind, intent_id, account, asset, amount)
       ON CONFLICT DO NOTHING`,
      [rows.map((r) => r.p.id), rows.map((r) => r.seq), rows.map((r) => r.p.kind), rows.map((r) => r.p.intentId ?? null), rows.map((r) => r.entry.account),
        rows.map((r) => r.entry.asset), rows.map((r) => r.entry.amount.toString()), envelope.occurredAt, envelope.eventId],
    );
  }
}
