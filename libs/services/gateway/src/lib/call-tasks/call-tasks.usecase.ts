import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { isAnswered, mayCancel, wasCancelled } from '@tollgate/call-life';
import { CallCancelRequested } from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { type CallerIdentity } from '../authenticate/authenticate.usecase';
import { Calls } from '../calls/calls.repository';
import { GATEWAY, GATEWAY_OUTBOX } from '../gateway.constants';
import { type CallTask, taskOf } from './call-task';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export type CancelOutcome =
  | { outcome: 'unknown' }
  /** Recorded (execution cancels the call if nothing was sent yet), or already cancelled: acknowledged. */
  | { outcome: 'requested' }
  /** Too late: the call was sent, or has its answer. */
  | { outcome: 'refused'; reason: string };

/**
 * The tasks extension over the call's life: `tasks/get` reads the agent's own call, `tasks/cancel`
 * records a cancel request for a call nothing was sent for. Identity comes from the credential: another agent's
 * intentId is an unknown task.
 */
@Injectable()
export class CallTasksUseCase {
  constructor(
    @InjectDataSource(GATEWAY) private readonly dataSource: DataSource,
    @Inject(GATEWAY_OUTBOX) private readonly outbox: OutboxWriter,
  ) {}

  async get(caller: CallerIdentity, taskId: string): Promise<CallTask | undefined> {
    if (!UUID.test(taskId)) return undefined;
    const call = await Calls.find(this.dataSource, taskId);
    return call && call.agent_id === caller.agentId ? taskOf(call) : undefined;
  }

  /** Decided on the call's locked state, so a cancel and the call's own facts never cross unseen. */
  async cancel(caller: CallerIdentity, taskId: string): Promise<CancelOutcome> {
    if (!UUID.test(taskId)) return { outcome: 'unknown' };
    return this.dataSource.transaction(async (m) => {
      const life = (await Calls.lockLives(m, [taskId])).get(taskId);
      const call = life && (await Calls.find(m, taskId));
      if (!life || !call || call.agent_id !== caller.agentId) return { outcome: 'unknown' };
      if (wasCancelled(life)) return { outcome: 'requested' };
      if (isAnswered(life)) return { outcome: 'refused', reason: 'The call already has its answer; there is nothing left to cancel. tasks/get returns it.' };
      if (!mayCancel(life)) {
        return { outcome: 'refused', reason: 'The call was already sent to a provider, so cancelling would not undo it; its result (or reconciliation) is delivered as usual through tasks/get.' };
      }
      await this.outbox.append(m, CallCancelRequested, { intentId: taskId, agentId: caller.agentId, requestedAt: new Date().toISOString() });
      return { outcome: 'requested' };
    });
  }
}
