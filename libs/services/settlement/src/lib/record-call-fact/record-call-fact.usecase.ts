import { Inject, Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type CallEvent, type CallState, confirmedAttempt, foldCall, initialState, isRefundDue } from '@tollgate/call-life';
import { CallRefunded, money } from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { SETTLEMENT_OPTIONS, SETTLEMENT_OUTBOX } from '../settlement.constants';
import { type SettlementOptions } from '../settlement.options';
import { type VerificationChange, VerificationRepository } from './verification.repository';

/** A call event as delivered: the fact, its id (the refund's cause) and its trace context. */
export interface DeliveredCallEvent {
  event: CallEvent;
  eventId: string;
  headers: Record<string, string>;
  /** Runs work done for this event inside its trace (the consumer's `within`); directly when absent. */
  within?: <T>(fn: () => Promise<T>) => Promise<T>;
}

const TRACE_HEADERS = ['traceparent', 'tracestate'];

/**
 * Records a batch of call facts with the call-life model: load the batch's calls (one statement, locked), evolve,
 * decide, save (one statement). A confirmed effect opens the verification window (closed later by
 * CloseVerificationUseCase, which pays `providerOf`); a rejected effect with money held is refunded at once
 * (`isRefundDue`), exactly once per call.
 */
@Injectable()
export class RecordCallFactUseCase {
  private readonly verifications = new VerificationRepository();

  constructor(
    @Inject(SETTLEMENT_OUTBOX) private readonly outbox: OutboxWriter,
    @Inject(SETTLEMENT_OPTIONS) private readonly options: SettlementOptions,
  ) {}

  async execute(manager: EntityManager, delivered: readonly DeliveredCallEvent[]): Promise<void> {
    const byCall = new Map<string, DeliveredCallEvent[]>();
    for (const d of delivered) byCall.set(d.event.payload.intentId, [...(byCall.get(d.event.payload.intentId) ?? []), d]);
    const loaded = await this.verifications.lockLives(manager, [...byCall.keys()]);
    const changes: VerificationChange[] = [];
    for (const [intentId, mine] of byCall) {
      const before = loaded.get(intentId);
      const life = foldCall(intentId, mine.map((d) => d.event), before?.life ?? initialState(intentId));
      const change: VerificationChange = { intentId, life, ...this.window(before?.due_at ?? null, life, mine) };
      if ((before?.state ?? 'open') === 'open' && isRefundDue(life)) {
        change.refunded = true;
        const cause = mine.at(-1)!;
        await (cause.within ?? ((fn) => fn()))(() => this.refund(manager, life, cause.eventId));
      }
      changes.push(change);
    }
    await this.verifications.saveLives(manager, changes);
  }

  /** The window opens with the first confirmed effect, carrying that event's trace context to the sweeper. */
  private window(dueAt: Date | null, life: CallState, mine: readonly DeliveredCallEvent[]): Pick<VerificationChange, 'dueInMs' | 'traceHeaders'> {
    if (dueAt !== null || confirmedAttempt(life) === undefined) return {};
    const confirmed = mine.find((d) => d.event.type === 'EffectConfirmed');
    const trace = Object.fromEntries(Object.entries(confirmed?.headers ?? {}).filter(([k]) => TRACE_HEADERS.includes(k)));
    return { dueInMs: this.options.verificationWindowMs, ...(Object.keys(trace).length > 0 ? { traceHeaders: trace } : {}) };
  }

  private async refund(manager: EntityManager, life: CallState, causationId: string): Promise<void> {
    const held = life.held!;
    const rejected = Object.values(life.attempts).find((a) => a.rejected)!.rejected!;
    await this.outbox.append(manager, CallRefunded, {
      intentId: life.intentId, holdId: held.holdId, amount: money(BigInt(held.amount.amountMinor), held.amount.asset), reason: rejected.code, ownerId: held.ownerId,
    }, { causationId });
  }
}
