import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import { Movements, splitFee } from '@tollgate/accounting';
import { type CallState, chargeOf, confirmedAttempt, isRefundDue, isSettlementDue, providerOf } from '@tollgate/call-life';
import { money } from '@tollgate/contracts';
import { type CallEmission, type CallInput, type CallWorkflow, type DecideInput, type Decision, type DueInput, type LifeChange, type OutboxWriter } from '@tollgate/messaging';
import { createLogger } from '@tollgate/observability';
import { SETTLEMENT, SETTLEMENT_OPTIONS, SETTLEMENT_OUTBOX } from '../settlement.constants';
import { type SettlementOptions } from '../settlement.options';
import { type LoadedVerification, type VerificationWindow, Verifications } from './verification.repository';

const TRACE_HEADERS = ['traceparent', 'tracestate'];
const logger = createLogger(SETTLEMENT);

/**
 * Settlement's share of a call's life, run by the messaging kit's workflow runner: a confirmed effect opens the
 * verification window — a wake-up of the call when it closes, delivered by the runner (`decideDue`), which settles the
 * call if the model finds it due (`isSettlementDue`); a rejected effect with money held is refunded at once
 * (`isRefundDue`) — once, since the refund or the settlement is folded into the state it was decided from.
 */
@Injectable()
export class VerificationWorkflow implements CallWorkflow<LoadedVerification, never, VerificationWindow> {
  readonly name = SETTLEMENT;
  readonly service = 'settlement';
  readonly ledger = SETTLEMENT;
  readonly dueEveryMs: number;
  readonly store;

  constructor(
    @InjectDataSource(SETTLEMENT) readonly dataSource: DataSource,
    @Inject(SETTLEMENT_OUTBOX) readonly outbox: OutboxWriter,
    @Inject(SETTLEMENT_OPTIONS) private readonly options: SettlementOptions,
  ) {
    this.dueEveryMs = options.sweepIntervalMs;
    this.store = {
      lock: (m: EntityManager, ids: readonly string[]) => Verifications.lockLives(m, ids),
      save: (m: EntityManager, changes: readonly LifeChange<LoadedVerification, VerificationWindow>[]) =>
        Verifications.saveLives(m, changes.map((c) => ({ intentId: c.intentId, life: c.life, ...c.extra, ...(c.wakeInMs !== undefined ? { dueInMs: c.wakeInMs } : {}) }))),
      claimDue: (m: EntityManager, limit: number) => Verifications.claimDue(m, limit),
    };
  }

  decide({ before, life, inputs }: DecideInput<LoadedVerification, undefined>): Decision<never, VerificationWindow> {
    const opens = (before?.due_at ?? null) === null && confirmedAttempt(life) !== undefined;
    return {
      ...(opens ? { wakeInMs: this.options.verificationWindowMs, extra: traceOf(inputs) } : {}),
      ...(isRefundDue(life) ? { emit: [refundOf(life)] } : {}),
    };
  }

  /** The window closed: a call the model finds due is settled — the fee split booked and CallSettled emitted, once. */
  decideDue({ life }: DueInput<LoadedVerification>): Decision<never, VerificationWindow> {
    return isSettlementDue(life) ? settlementOf(life, this.options.feeBps) : {};
  }

  /** A due call's work joins the trace of the event that opened its window. */
  traceOf(row: LoadedVerification): Record<string, string> | undefined {
    return row.trace_headers ?? undefined;
  }
}

/** The window carries the trace context of the confirmed effect that opened it. */
function traceOf(inputs: readonly CallInput[]): VerificationWindow {
  const confirmed = inputs.find((i) => i.event.type === 'EffectConfirmed');
  const trace = Object.fromEntries(Object.entries(confirmed?.headers ?? {}).filter(([k]) => TRACE_HEADERS.includes(k)));
  return Object.keys(trace).length > 0 ? { traceHeaders: trace } : {};
}

/**
 * The charge split (platform fee floored to the minor unit, the rest to `providerOf`): settlement's half of the capture
 * booked (clearing → payable + revenue), CallSettled telling payment to book its half (held → clearing). The charge is
 * the hold at a fixed price; a metered call's units × unit price, at least its minimum, never past the hold.
 */
export function settlementOf(life: CallState, feeBps: number): Decision<never, never> {
  const held = life.held!;
  const charge = chargeOf(life)!;
  const gross = BigInt(charge.amount.amountMinor);
  const asset = held.amount.asset;
  const providerId = providerOf(life)!;
  const { fee, net } = splitFee(gross, feeBps);
  if (charge.flag) logger.warn({ intentId: life.intentId, providerId, flag: charge.flag, charged: charge.amount.amountMinor }, 'a metered call\'s usage report needs a look: charged by the documented rule');
  const settled: CallEmission = {
    type: 'CallSettled',
    payload: {
      intentId: life.intentId, holdId: held.holdId, providerId, amount: money(gross, asset), fee: money(fee, asset), providerNet: money(net, asset), ownerId: held.ownerId,
      // A metered call: how the charge was computed (the rest of the hold is released by payment: hold − amount).
      ...(charge.metered ? { usage: { ...charge.metered, ...(charge.flag ? { flag: charge.flag } : {}) } } : {}),
    },
  };
  return {
    postings: [{ id: `settle:${held.holdId}`, kind: 'settle', entries: Movements.settle(providerId, { minor: gross, asset }, fee), intentId: life.intentId }],
    emit: [settled],
  };
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
