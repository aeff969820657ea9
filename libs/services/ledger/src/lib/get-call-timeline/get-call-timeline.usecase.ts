import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { type Amount, callEvent, type CallState, chargeOf, contradictions, foldCall, isCallEventType, status } from '@tollgate/call-life';
import { type FinanceCaller, mayReadOwner, visibleDetails } from '../finance-access/finance-caller';
import { LEDGER } from '../ledger.constants';
import { type KeyedCall, TimelineEntries } from './timeline-entries.repository';

export interface TimelineEntry {
  eventId: string;
  type: string;
  producer: string;
  occurredAt: string;
  recordedAt: string;
  details: Record<string, unknown>;
}

/** The call's money at a glance: the rail, what was held, charged and released, and a metered call's usage. */
export interface CallMoney {
  rail: 'wallet' | 'x402' | 'mpp' | 'free' | null;
  held: Amount | null;
  charged: Amount | null;
  released: Amount | null;
  usage: { unit: string; units: string | null; unitPriceMinor: string; minimumMinor: string | null; flag: string | null } | null;
}

export interface CallTimeline {
  intentId: string;
  status: string;
  contradictions: string[];
  money: CallMoney;
  timeline: TimelineEntry[];
}

/** What the model says of the call's money: held, then charged (settled) with the rest released, or all refunded. */
export function moneyOf(life: CallState): CallMoney {
  const held = life.held?.amount ?? null;
  const rail = !life.held ? null : life.held.x402PaymentResponse ? 'x402' : life.held.mppReceipt ? 'mpp' : life.held.free ? 'free' : 'wallet';
  const charge = chargeOf(life);
  const charged = life.settled?.amount ?? (life.refunded && held ? { amountMinor: '0', asset: held.asset } : null);
  const released = held && charged ? { amountMinor: (BigInt(held.amountMinor) - BigInt(charged.amountMinor)).toString(), asset: held.asset } : null;
  const m = charge?.metered;
  return { rail, held, charged, released, usage: m ? { unit: m.unit, units: m.units ?? null, unitPriceMinor: m.unitPriceMinor, minimumMinor: m.minimumMinor ?? null, flag: charge?.flag ?? null } : null };
}

/** Heavy or agent-supplied fields are left out of the finance view (the result itself, the arguments). */
const OMITTED = new Set(['result', 'arguments']);

@Injectable()
export class GetCallTimelineUseCase {
  constructor(@InjectDataSource(LEDGER) private readonly dataSource: DataSource) {}

  /** The call as this caller may see it; undefined when unknown or outside an owner-scoped token's owner. */
  async execute(intentId: string, caller: FinanceCaller): Promise<CallTimeline | undefined> {
    const rows = await TimelineEntries.ofCall(this.dataSource, intentId);
    if (rows.length === 0) return undefined;
    const ownerId = rows.map((r) => r.payload['ownerId']).find((o): o is string => typeof o === 'string');
    if (!mayReadOwner(caller, ownerId ?? '')) return undefined;
    const life = foldCall(intentId, rows.filter((r) => isCallEventType(r.type)).map((r) => callEvent(r.type as never, r.payload as never)));
    return {
      intentId,
      status: status(life) ?? 'unknown',
      contradictions: contradictions(life),
      money: moneyOf(life),
      timeline: rows.map((r) => ({
        eventId: r.event_id,
        type: r.type,
        producer: r.producer,
        occurredAt: r.occurred_at.toISOString(),
        recordedAt: r.recorded_at.toISOString(),
        details: visibleDetails(caller, Object.fromEntries(Object.entries(r.payload).filter(([k]) => !OMITTED.has(k)))),
      })),
    };
  }

  /**
   * Whether the platform knows a call the ledger has not recorded yet (the ledger is a read model of the event log:
   * it follows each fact within about a second). Only for a caller who may see the call's owner.
   */
  async knownButNotYetRecorded(intentId: string, caller: FinanceCaller): Promise<boolean> {
    const ownerId = await TimelineEntries.ownerOfPendingCall(this.dataSource, intentId);
    return ownerId !== undefined && mayReadOwner(caller, ownerId);
  }

  /** The calls an operation key named (keys are per agent, so several agents' calls may share one). */
  byOperationKey(operationKey: string): Promise<KeyedCall[]> {
    return TimelineEntries.callsByOperationKey(this.dataSource, operationKey);
  }
}
