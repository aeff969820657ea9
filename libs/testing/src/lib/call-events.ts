import { randomUUID } from 'node:crypto';
import {
  buildEnvelope, CallRequested, CallSettled, type EventDefinition, type EventEnvelope, HoldReleased, PaymentHeld, WalletFunded,
} from '@tollgate/contracts';

/** An event as the ledger consumes it: its topic and validated envelope. */
export interface TopicEvent { topic: string; envelope: EventEnvelope }

const ev = <P extends object>(def: EventDefinition<P>, payload: P, at: Date): TopicEvent =>
  ({ topic: def.topic, envelope: buildEnvelope(def, payload, { producer: 'test', occurredAt: at }) });

/**
 * The events of `calls` paid calls, as payment and settlement emit them (validated envelopes): each owner's wallet
 * funded first, then per call CallRequested, PaymentHeld, HoldReleased (captured, or voided every seventh call) and —
 * for captured ones — CallSettled with a fee. Times advance a minute per call from `start`, crossing days.
 */
export function paidCallEvents(calls: number, opts: { owners?: number; start?: Date } = {}): TopicEvent[] {
  const owners = opts.owners ?? 5;
  const start = (opts.start ?? new Date('2026-11-01T00:00:00Z')).getTime();
  const out: TopicEvent[] = [];
  for (let o = 0; o < owners; o++) {
    const amount = { amountMinor: String(calls * 1000), asset: 'USD' };
    out.push(ev(WalletFunded, { depositId: randomUUID(), ownerId: `owner-${o}`, reference: `seed-${o}-${randomUUID()}`, source: 'card', amount }, new Date(start)));
  }
  for (let i = 0; i < calls; i++) out.push(...oneCall(i, `owner-${i % owners}`, new Date(start + (i + 1) * 60_000)));
  return out;
}

function oneCall(i: number, ownerId: string, at: Date): TopicEvent[] {
  const intentId = randomUUID();
  const holdId = randomUUID();
  const price = { amountMinor: String(100 + (i % 13) * 10), asset: 'USD' };
  const zero = { amountMinor: '0', asset: 'USD' };
  const voided = i % 7 === 6;
  const events = [
    ev(CallRequested, {
      intentId, ownerId, agentId: `agent-${ownerId}`, mcpUrlId: 'url-1', toolId: `tool-${i % 4}`, toolName: `tool_${i % 4}`, contractVersion: 1,
      arguments: { q: i }, argumentsHash: 'a'.repeat(64), price, deadlineAt: new Date(at.getTime() + 30_000).toISOString(),
    }, at),
    ev(PaymentHeld, { intentId, holdId, ownerId, amount: price }, at),
    ev(HoldReleased, { intentId, holdId, ownerId, outcome: voided ? 'voided' : 'captured', held: price, captured: voided ? zero : price, repaidDebt: zero }, at),
  ];
  if (!voided) {
    const fee = { amountMinor: String(Math.floor(Number(price.amountMinor) / 10)), asset: 'USD' };
    events.push(ev(CallSettled, { intentId, holdId, providerId: `provider-${i % 3}`, amount: price, ownerId, fee }, at));
  }
  return events;
}
