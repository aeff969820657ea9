import { Inject, Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type CallState, confirmedAttempt, isRefundDue } from '@tollgate/call-life';
import { money } from '@tollgate/contracts';
import { type CallEmission, type CallInput, type CallWorkflow, type DecideInput, type Decision, type LifeChange, type OutboxWriter } from '@tollgate/messaging';
import { SETTLEMENT, SETTLEMENT_OPTIONS, SETTLEMENT_OUTBOX } from '../settlement.constants';
import { type SettlementOptions } from '../settlement.options';
import { type LoadedVerification, type VerificationWindow, Verifications } from './verification.repository';

const TRACE_HEADERS = ['traceparent', 'tracestate'];

/**
 * Settlement's share of a call's life, run by the messaging kit's workflow runner: a confirmed effect opens the
 * verification window (closed later by CloseVerificationUseCase when `isSettlementDue`); a rejected effect with money
 * held is refunded at once (`isRefundDue`) — once, since the refund is folded into the state it was decided from.
 */
@Injectable()
export class VerificationWorkflow implements CallWorkflow<LoadedVerification, never, VerificationWindow> {
  readonly name = SETTLEMENT;
  readonly service = 'settlement';
  readonly decisions = ['isSettlementDue', 'isRefundDue'];
  readonly store;

  constructor(
    @Inject(SETTLEMENT_OUTBOX) readonly outbox: OutboxWriter,
    @Inject(SETTLEMENT_OPTIONS) private readonly options: SettlementOptions,
  ) {
    this.store = {
      lock: (m: EntityManager, ids: readonly string[]) => Verifications.lockLives(m, ids),
      save: (m: EntityManager, changes: readonly LifeChange<LoadedVerification, VerificationWindow>[]) =>
        Verifications.saveLives(m, changes.map((c) => ({ intentId: c.intentId, life: c.life, ...c.extra }))),
    };
  }

  decide({ before, life, inputs }: DecideInput<LoadedVerification, undefined>): Decision<never, VerificationWindow> {
    return { extra: this.window(before?.due_at ?? null, life, inputs), ...(isRefundDue(life) ? { emit: [refundOf(life)] } : {}) };
  }

  /** The window opens with the first confirmed effect, carrying that event's trace context to the sweeper. */
  private window(dueAt: Date | null, life: CallState, inputs: readonly CallInput[]): VerificationWindow {
    if (dueAt !== null || confirmedAttempt(life) === undefined) return {};
    const confirmed = inputs.find((i) => i.event.type === 'EffectConfirmed');
    const trace = Object.fromEntries(Object.entries(confirmed?.headers ?? {}).filter(([k]) => TRACE_HEADERS.includes(k)));
    return { dueInMs: this.options.verificationWindowMs, ...(Object.keys(trace).length > 0 ? { traceHeaders: trace } : {}) };
  }
}

/** The hold given back whole; the reason is the rejection's code (what finance reads). */
function refundOf(life: CallState): CallEmission {
  const held = life.held!;
  const rejected = Object.values(life.attempts).find((a) => a.rejected)!.rejected!;
  return {
    type: 'CallRefunded',
    payload: { intentId: life.intentId, holdId: held.holdId, amount: money(BigInt(held.amount.amountMinor), held.amount.asset), reason: rejected.code, ownerId: held.ownerId },
  };
}
