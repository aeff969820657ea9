import { Inject, Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { callEvent, evolve, initialState, mayRejectUnsent } from '@tollgate/call-life';
import { EffectRejected, type EffectRejectedPayload } from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { trySavepoint } from '@tollgate/persistence';
import { EXECUTION_OUTBOX } from '../execution.constants';
import { PendingCalls } from './pending-calls.repository';

/** The agent error of a call execution parked before sending it: a platform fault, nothing performed, hold refunded. */
export const PARKED_REJECTION_CODE = 'INTERNAL_SERVER_ERROR';

/**
 * Execution parked an event of a call (a request or a hold it could not apply): the agent is answered now instead of
 * waiting for a dispatch that never comes — EffectRejected, so the gateway answers and settlement refunds the hold.
 * Only while nothing was sent (`mayRejectUnsent`): a parked event of a call already dispatched leaves that call to its
 * result or its reconciliation. The rejection is recorded in the call's state in a savepoint; when that write is what
 * fails, the event alone is sent — the state never saw the request or the hold it lacks, so it never dispatches.
 */
@Injectable()
export class RejectParkedCallUseCase {

  constructor(@Inject(EXECUTION_OUTBOX) private readonly outbox: OutboxWriter) {}

  async execute(manager: EntityManager, parked: { intentId?: string; causationId?: string }): Promise<void> {
    const { intentId, causationId } = parked;
    if (!intentId) return; // nothing names a call: nobody waits on it
    const rejected: EffectRejectedPayload = {
      intentId, attempt: 1, code: PARKED_REJECTION_CODE,
      reason: 'The platform could not send this call to a provider; nothing was performed and the hold is refunded.',
    };
    let sent = false;
    await trySavepoint(manager, 'parked_rejection', async () => {
      const life = (await PendingCalls.lockLives(manager, [intentId])).get(intentId)?.life ?? initialState(intentId);
      sent = !mayRejectUnsent(life);
      if (!sent) await PendingCalls.saveLives(manager, [{ life: evolve(life, callEvent('EffectRejected', rejected)) }]);
    });
    if (!sent) await this.outbox.append(manager, EffectRejected, rejected, causationId ? { causationId } : {});
  }
}
