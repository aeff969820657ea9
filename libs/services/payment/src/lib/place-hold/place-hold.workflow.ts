import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import { type CallState } from '@tollgate/call-life';
import { type CallRequestedPayload } from '@tollgate/contracts';
import { type CallInput, type CallWorkflow, type DecideInput, type DueInput, type OutboxWriter, type ParkedInput, type ResultInput } from '@tollgate/messaging';
import { type AttemptResult, AttemptSteps } from './attempt-steps';
import { decideAttempt, leaseAttempt } from './attempt-verdict';
import { PAYMENT, PAYMENT_OUTBOX } from '../payment.constants';
import { PARKED_REFUSAL, rejectionOf } from '../refusal';
import { type BatchReads, type PaymentCommand, type PaymentDecision, type PaymentWrites, planHolds, refuse } from './hold-plan';
import { HoldReads } from './hold-reads';
import { type DecidedCall, PaymentStore } from './payment-store';

/** The batch's reads and the decisions planned from them. */
interface Planned {
  reads: BatchReads;
  plan: Map<string, PaymentDecision>;
}

/**
 * Payment's share of a call's request, run by the workflow runner (the route's `spend policy` step). On CallRequested
 * the spend policy and the platform's velocity rules decide whether the call may spend, then a pending hold is placed
 * for its price from the prepaid wallet — or the call is refused with the matching code, or its outside payment (x402,
 * MPP) is recorded, due at once. `prepare` reads under the agents' locks with the wallets' rows locked, so with
 * balance B and N simultaneous calls of price p exactly ⌊B/p⌋ are held, in one batch or in N.
 *
 * An outside payment's life runs through the runner too: its next step is due work (leased, so a step whose process
 * dies is taken again when the lease runs out), the step's I/O a command (`AttemptSteps`), its result fed back and
 * decided over the attempt and the wallet locked (`decideAttempt`): the hold placed from the money credited, or the
 * refusal — no timer, no loop of payment's own.
 */
@Injectable()
export class PlaceHoldWorkflow implements CallWorkflow<DecidedCall, PaymentCommand, PaymentWrites, Planned, AttemptResult> {
  readonly name = 'payment';
  readonly service = 'payment';
  readonly ledger = PAYMENT;
  readonly dueEveryMs: number;
  readonly store;

  constructor(
    @Inject(PAYMENT_OUTBOX) readonly outbox: OutboxWriter,
    @InjectDataSource(PAYMENT) readonly dataSource: DataSource,
    private readonly reads: HoldReads,
    private readonly steps: AttemptSteps,
  ) {
    this.dueEveryMs = steps.pollMs;
    this.store = {
      lock: PaymentStore.lock,
      // A CallRequested is decided over what `prepare` reads under the agents' locks (facts.decided included).
      lockForEvents: () => Promise.resolve(new Map<string, DecidedCall>()),
      save: PaymentStore.save,
      // No rail with steps (no facilitator, no MPP): nothing is ever due, and the runner keeps no due clock.
      ...(steps.active ? { claimDue: PaymentStore.claimDue } : {}),
    };
  }

  async prepare(m: EntityManager, _lives: readonly CallState[], inputs: readonly CallInput[]): Promise<Planned> {
    const reads = await this.reads.read(m, inputs);
    return { reads, plan: planHolds(reads) };
  }

  decide({ life, context }: DecideInput<DecidedCall, Planned>): PaymentDecision {
    return context.plan.get(life.intentId) ?? {};
  }

  /** Due work: an outside payment's next step, leased to it (the step runs after the commit, as a command). */
  decideDue({ before }: DueInput<DecidedCall>): PaymentDecision {
    return before.due ? leaseAttempt(before.due, this.steps.leaseMs) : {};
  }

  /** A step's verdict, over the attempt and the owner's wallet locked. */
  decideResult({ before, result }: ResultInput<DecidedCall, AttemptResult>): PaymentDecision {
    return decideAttempt(before?.paying, result);
  }

  /**
   * A CallRequested that could not be applied and is parked: the agent gets a final answer now instead of waiting on a
   * hold that never comes, recorded as any refusal (a later re-drive finds it decided). A call decided before keeps
   * its answer.
   */
  decideParked({ life, stored, payload }: ParkedInput): PaymentDecision {
    if (stored) return {};
    if (payload && 'agentId' in payload) return refuse(payload as CallRequestedPayload, PARKED_REFUSAL);
    return { emit: [{ type: 'PaymentRejected', payload: { intentId: life.intentId, ...rejectionOf(PARKED_REFUSAL) } }] };
  }

  /** A step of an outside payment: the facilitator, the chain, MPP's backend. */
  run(command: PaymentCommand): Promise<AttemptResult> {
    return this.steps.run(command);
  }
}
