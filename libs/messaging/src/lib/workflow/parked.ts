import { initialState } from '@tollgate/call-life';
import { type EventDefinition } from '@tollgate/contracts';
import { trySavepoint } from '@tollgate/persistence';
import { type ParkedContext } from '../inbox/handler';
import { type CallWorkflow, type CommandResult, type StoredLife } from './workflow.types';
import { type Decision, writeDecision } from './decision';

/**
 * A parked input, run through the workflow like any other: the call's state locked, `decideParked`, its events written
 * and folded, the state saved — in a savepoint. When that write is what fails (the fault the park is about), the
 * decision over the bare call is sent alone: the state never saw what it lacks, so it decides nothing more from it.
 */
export async function answerParked<R extends StoredLife, C, X, K, O extends CommandResult>(wf: CallWorkflow<R, C, X, K, O>, event: EventDefinition<object>, ctx: ParkedContext<object>): Promise<void> {
  const { manager: m, intentId, eventId } = ctx;
  const decideParked = wf.decideParked?.bind(wf);
  if (!intentId || !decideParked) return; // nothing names a call: nobody waits on it
  const recorded = await trySavepoint(m, 'parked_answer', async () => {
    const before = (await wf.store.lock(m, [intentId])).get(intentId);
    const life = before?.life ?? initialState(intentId);
    const decision: Decision<C, X> = decideParked({ life, event, stored: before !== undefined, ...(ctx.payload ? { payload: ctx.payload } : {}) });
    const after = await writeDecision(wf, m, life, decision, eventId);
    await wf.store.save(m, [{ intentId, before, life: after, extra: decision.extra, inputs: [] }]);
  });
  if (!recorded) await writeDecision(wf, m, initialState(intentId), { emit: decideParked({ life: initialState(intentId), event, ...(ctx.payload ? { payload: ctx.payload } : {}) }).emit ?? [] }, eventId);
}
