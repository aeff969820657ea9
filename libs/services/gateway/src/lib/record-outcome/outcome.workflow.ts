import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type CallState, isAnswered, resultAttempt, type UpstreamResult } from '@tollgate/call-life';
import { type EventDefinition } from '@tollgate/contracts';
import { type CallInput, type CallWorkflow, type DecideInput, type Decision, type LifeChange, type ParkedContext } from '@tollgate/messaging';
import { Calls } from '../calls/calls.repository';
import { CallWaiters } from '../call-tool/call-waiters.service';
import { ANSWERING_TOPICS, OUTCOMES_CONSUMER } from '../calls/outcome-events';

type Row = { life: CallState };
/** What the gateway keeps beside the state: the body of the result the agent is given, when it arrived in the batch. */
type Extra = { body?: UpstreamResult };

/**
 * The gateway's share of a call's life: fold the other services' facts into the call's row (the call-life state) and
 * wake the waiting request when the call becomes answered (`isAnswered`). Run by the messaging kit's workflow runner.
 */
@Injectable()
export class OutcomeWorkflow implements CallWorkflow<Row, string, Extra> {
  readonly name = OUTCOMES_CONSUMER;
  readonly service = 'gateway';
  readonly store = {
    lock: async (m: EntityManager, ids: readonly string[]) => new Map([...(await Calls.lockLives(m, ids))].map(([id, life]) => [id, { life }])),
    // Only calls this gateway recorded have a row; facts of any other call change nothing.
    save: (m: EntityManager, changes: readonly LifeChange<Row, Extra>[]) =>
      Calls.saveLives(m, changes.filter((c) => c.before).map((c) => ({ intentId: c.intentId, life: c.life, ...c.extra }))),
  };

  constructor(private readonly waiters: CallWaiters) {}

  decide({ before, life, inputs }: DecideInput<Row, undefined>): Decision<string, Extra> {
    if (!before) return {};
    const answeredNow = isAnswered(life) && !isAnswered(before.life);
    return { extra: bodyOf(inputs, resultAttempt(life)), ...(answeredNow ? { commands: [life.intentId] } : {}) };
  }

  /**
   * A parked fact that could answer the call: its waiting agent is woken and told the outcome is held for review (the
   * park itself is what it reads, so this holds even when gateway.call is what keeps failing).
   */
  async onParked(event: EventDefinition<object>, { manager, intentId }: ParkedContext<object>): Promise<void> {
    if (intentId && ANSWERING_TOPICS.includes(event.topic)) await this.waiters.wakeEverywhere(manager, intentId);
  }

  /** That answer is provisional: a re-drive folds the fact, and the same key then replays the call's verdict. */
  readonly redriveAfterAnswer = true;

  /** The call became answered: its waiting request in this process reads it now (other replicas hear the trigger). */
  run(intentId: string): void {
    this.waiters.notify(intentId);
  }
}

/** The body of the result the agent is given, when it arrived in this batch (a later attempt's replaces an earlier one's). */
function bodyOf(inputs: readonly CallInput[], attempt: number | undefined): Extra {
  const e = inputs.map((i) => i.event).find((x) => x.type === 'ResultReceived' && x.payload.attempt === attempt);
  return e?.type === 'ResultReceived' ? { body: e.payload.result } : {};
}
