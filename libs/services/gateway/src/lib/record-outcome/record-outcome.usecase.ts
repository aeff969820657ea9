import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type CallEvent, foldCall, isAnswered, resultAttempt } from '@tollgate/call-life';
import { type CallChange, CallsRepository } from '../calls/calls.repository';

/**
 * Folds the other services' events about calls into the gateway's call rows, a batch at a time: load the states of
 * the batch's calls (one statement, locked), evolve each with its events, save them (one statement). Returns the calls
 * that became answered, for their waiting requests to be woken after commit.
 */
@Injectable()
export class RecordOutcomeUseCase {
  constructor(private readonly calls: CallsRepository) {}

  async execute(manager: EntityManager, events: readonly CallEvent[]): Promise<string[]> {
    const byCall = new Map<string, CallEvent[]>();
    for (const e of events) byCall.set(e.payload.intentId, [...(byCall.get(e.payload.intentId) ?? []), e]);
    const lives = await this.calls.lockLives(manager, [...byCall.keys()]);
    const changes: CallChange[] = [];
    for (const [intentId, life] of lives) {
      const mine = byCall.get(intentId)!;
      const next = foldCall(intentId, mine, life);
      changes.push({ intentId, life: next, ...bodyOf(mine, resultAttempt(next)) });
    }
    await this.calls.saveLives(manager, changes);
    return changes.filter((c) => isAnswered(c.life) && !isAnswered(lives.get(c.intentId)!)).map((c) => c.intentId);
  }
}

/** The body of the result the agent is given, when it arrived in this batch (a later attempt's replaces an earlier one's). */
function bodyOf(events: readonly CallEvent[], attempt: number | undefined): { body?: CallChange['body'] } {
  const e = events.find((x) => x.type === 'ResultReceived' && x.payload.attempt === attempt);
  return e?.type === 'ResultReceived' ? { body: e.payload.result } : {};
}
