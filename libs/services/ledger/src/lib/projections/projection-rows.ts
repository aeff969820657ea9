import { type Entry, Movements } from '@tollgate/accounting';
import {
  CallSettled, type CallSettledPayload, type EventEnvelope, HoldReleased, type HoldReleasedPayload, PaymentHeld, type PaymentHeldPayload, PayoutIssued,
  type PayoutIssuedPayload, WalletChargedBack, type WalletChargedBackPayload, WalletFunded, type WalletFundedPayload,
} from '@tollgate/contracts';

/**
 * What the ledger's projections hold for one event, as plain rows (pure): the call's timeline entry and the journal
 * entries of its postings. The live consumer and ops replay both write these rows, so a rebuild cannot drift from the
 * live projection by construction; only the writer's target tables differ.
 */
export interface TimelineRow {
  eventId: string;
  intentId: string;
  type: string;
  producer: string;
  topic: string;
  occurredAt: string;
  payload: string;
}

export interface JournalRow {
  postingId: string;
  seq: number;
  kind: string;
  intentId: string | null;
  account: string;
  asset: string;
  amount: string;
  occurredAt: string;
  eventId: string;
}

type Posting = { id: string; kind: string; intentId?: string; entries: Entry[] };

const m = (x: { amountMinor: string; asset: string }) => ({ minor: BigInt(x.amountMinor), asset: x.asset });

export function timelineRow(topic: string, e: EventEnvelope, intentId: string): TimelineRow {
  return { eventId: e.eventId, intentId, type: e.type, producer: e.producer, topic, occurredAt: e.occurredAt, payload: JSON.stringify(e.payload) };
}

/**
 * The journal entries an event books (none for an event that moves no money), with the same movement builders payment
 * and settlement use (libs/accounting). A posting's id names what it books, so a redelivered event books nothing new.
 */
export function journalRows(e: EventEnvelope, payload: object): JournalRow[] {
  const postings = postingsOf(e.type, payload);
  return postings.flatMap((p) => p.entries.filter((x) => x.amount !== 0n).map((entry, seq) => ({
    postingId: p.id, seq, kind: p.kind, intentId: p.intentId ?? null, account: entry.account, asset: entry.asset,
    amount: entry.amount.toString(), occurredAt: e.occurredAt, eventId: e.eventId,
  })));
}

function postingsOf(type: string, payload: object): Posting[] {
  switch (type) {
    case WalletFunded.type: return walletFunded(payload as WalletFundedPayload);
    case WalletChargedBack.type: {
      const p = payload as WalletChargedBackPayload;
      return [{ id: `chargeback:${p.reference}`, kind: 'chargeback', entries: Movements.chargeback(p.ownerId, m(p.amount), BigInt(p.fromAvailable.amountMinor)) }];
    }
    case PaymentHeld.type: {
      const p = payload as PaymentHeldPayload;
      return [{ id: `hold:${p.holdId}`, kind: 'hold', intentId: p.intentId, entries: Movements.hold(p.ownerId, m(p.amount)) }];
    }
    case HoldReleased.type: return holdReleased(payload as HoldReleasedPayload);
    case CallSettled.type: return callSettled(payload as CallSettledPayload);
    case PayoutIssued.type: {
      const p = payload as PayoutIssuedPayload;
      return [{ id: `payout:${p.payoutId}`, kind: 'payout', entries: Movements.payout(p.providerId, m(p.amount)) }];
    }
    default: return [];
  }
}

function walletFunded(p: WalletFundedPayload): Posting[] {
  const repaid = p.repaidDebt ? BigInt(p.repaidDebt.amountMinor) : 0n;
  return [{ id: `deposit:${p.reference}`, kind: 'deposit', entries: Movements.deposit(p.ownerId, m(p.amount), repaid) }];
}

/** Payment's half: the hold captured into clearing or voided, released money repaying debt first. */
function holdReleased(p: HoldReleasedPayload): Posting[] {
  const held = m(p.held);
  const repaid = BigInt(p.repaidDebt.amountMinor);
  const captured = p.outcome === 'captured';
  const entries = captured ? Movements.capture(p.ownerId, held, BigInt(p.captured.amountMinor), repaid) : Movements.void(p.ownerId, held, repaid);
  return [{ id: `${captured ? 'capture' : 'void'}:${p.holdId}`, kind: captured ? 'capture' : 'void', intentId: p.intentId, entries }];
}

/** Settlement's half: clearing → provider payable (net) + platform revenue (fee). */
function callSettled(p: CallSettledPayload): Posting[] {
  if (!p.fee) return []; // settled before fees were split: nothing to book
  return [{ id: `settle:${p.holdId}`, kind: 'settle', intentId: p.intentId, entries: Movements.settle(p.providerId, m(p.amount), BigInt(p.fee.amountMinor)) }];
}
