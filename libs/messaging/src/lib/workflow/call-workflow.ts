import { randomUUID } from 'node:crypto';
import { type EntityManager } from 'typeorm';
import { type CallEvent, foldCall, initialState, ROUTE_WAIT_MS, routeDelivery, routeReads } from '@tollgate/call-life';
import { type EventDefinition } from '@tollgate/contracts';
import { createLogger } from '@tollgate/observability';
import { type BatchContext, type BatchEvent, type ParkedContext, perBatch } from '../inbox/handler';
import { callEventDefinitions, callEventOf } from './call-events';
import { runCommand, roomForCommands } from './commands';
import { bookPostings, type PostingEffect, writeDecision } from './decision';
import { type DueWork, dueWork } from './due-work';
import { answerParked } from './parked';
import { type CallInput, type CallWorkflow, type CommandResult, type LifeChange, type StoredLife } from './workflow.types';

/**
 * The runner: a workflow as a consumer. Each batch: load the batch's calls (locked), fold the inputs, decide, append
 * the emitted events and fold them too, save every state in one statement — all in the consumer's transaction, with
 * its inbox record — then run the commands after commit. No service writes this loop.
 */
export function runCallWorkflow<R extends StoredLife, C, X, K, O extends CommandResult>(wf: CallWorkflow<R, C, X, K, O>) {
  // The route is the wiring: the workflow is subscribed to what the steps it runs read.
  const reads = routeReads(wf.name);
  const parked = async (event: EventDefinition<object>, ctx: ParkedContext<object>) => {
    await answerParked(wf, event, ctx);
    await wf.onParked?.(event, ctx);
  };
  // Due work (a call's scheduled wake-up) is an input the runner delivers too, on its own clock.
  const due = wf.decideDue && wf.store.claimDue ? dueWork(wf) : undefined;
  // Embedded mode: what the route has applied in the producer's transaction, and what it lets wait for the next fact.
  const delivery = routeDelivery(wf.name);
  const topics = (types: readonly CallEvent['type'][]) => callEventDefinitions(types).map((d) => d.topic);
  return {
    name: wf.name,
    ...(delivery.inline.length > 0 ? { inline: topics(delivery.inline) } : {}),
    ...(delivery.waits.length > 0 ? { deferrable: { topics: topics(delivery.waits), upToMs: ROUTE_WAIT_MS } } : {}),
    ...perBatch(callEventDefinitions(reads), (ctx) => applyWorkflow(wf, ctx, due), {
      dedupedByModel: true, ...(wf.onParked || wf.decideParked ? { onParked: parked } : {}), ...(wf.redriveAfterAnswer ? { redriveAfterAnswer: true } : {}),
    }),
    ...(due ? { due } : {}),
  };
}

/** How a batch's inputs are run: each call's work inside its cause's trace, commands handed to the consumer's afterCommit. */
export interface InputHooks<C> {
  within?<T>(cause: CallInput, fn: () => Promise<T>): Promise<T>;
  afterCommit?(command: C): void;
  /** A decision asked for a wake-up of 0 ms: due work should look right after the commit. */
  dueNow?(): void;
}

async function applyWorkflow<R extends StoredLife, C, X, K, O extends CommandResult>(wf: CallWorkflow<R, C, X, K, O>, ctx: BatchContext, due: DueWork | undefined): Promise<void> {
  const events = new Map<CallInput, BatchEvent>();
  const inputs = ctx.events.map((e) => {
    const event = callEventOf(e.type, e.payload);
    if (!event) throw new Error(`${e.type} is not a call event of the model`);
    const input: CallInput = { event, eventId: e.envelope.eventId, headers: e.headers, payload: e.payload };
    events.set(input, e);
    return input;
  });
  await applyCallInputs(wf, ctx.manager, inputs, {
    within: (cause, fn) => ctx.within(events.get(cause)!, fn),
    // The consumer hands the command off and goes on with the next events: one call's provider never holds up
    // another call. It waits only while the process already runs MAX_COMMANDS_IN_FLIGHT (back-pressure).
    afterCommit: (command) => ctx.afterCommit(() => {
      void runCommand(wf, command).catch((err) => createLogger(wf.service).error({ err }, 'a command of the call failed after its commit'));
      return roomForCommands();
    }),
    ...(due ? { dueNow: () => ctx.afterCommit(() => due.nudge()) } : {}),
  });
}

/**
 * The runner's step over typed inputs, in the caller's transaction (the consumer's, or a test's): load, fold, decide,
 * emit, save. Returns the commands decided (already handed to `afterCommit` when given). The last input of a call is
 * the cause of what is decided for it (its id is the emitted events' causation, its trace theirs).
 */
export async function applyCallInputs<R extends StoredLife, C, X, K, O extends CommandResult>(wf: CallWorkflow<R, C, X, K, O>, m: EntityManager, inputs: readonly CallInput[], hooks: InputHooks<C> = {}): Promise<C[]> {
  const byCall = new Map<string, CallInput[]>();
  for (const i of inputs) byCall.set(i.event.payload.intentId, [...(byCall.get(i.event.payload.intentId) ?? []), i]);
  const rows = await (wf.store.lockForEvents ?? wf.store.lock)(m, [...byCall.keys()]);
  const folded = [...byCall].map(([intentId, mine]) => ({ intentId, mine, life: foldCall(intentId, mine.map((i) => i.event), rows.get(intentId)?.life ?? initialState(intentId)) }));
  const context = wf.prepare ? await wf.prepare(m, folded.map((f) => f.life), inputs) : (undefined as K);
  const within = hooks.within ?? ((_cause, fn) => fn());
  const changes: LifeChange<R, X>[] = [];
  const commands: C[] = [];
  const postings: PostingEffect[] = [];
  for (const { intentId, mine, life } of folded) {
    const before = rows.get(intentId);
    const cause = mine.at(-1)!;
    const decision = wf.decide({ before, life, inputs: mine, context });
    const after = await within(cause, () => writeDecision(wf, m, life, decision, cause.eventId, postings));
    changes.push({ intentId, before, life: after, extra: decision.extra, inputs: mine, ...(decision.wakeInMs !== undefined ? { wakeInMs: decision.wakeInMs } : {}) });
    for (const command of decision.commands ?? []) {
      commands.push(command);
      if (hooks.afterCommit) await within(cause, async () => hooks.afterCommit!(command));
    }
  }
  await bookPostings(wf, m, postings);
  await wf.store.save(m, changes);
  if (changes.some((c) => c.wakeInMs === 0)) hooks.dueNow?.();
  return commands;
}

/** Facts as inputs of no particular delivery (each its own id, no trace): for tests and tools that feed a workflow. */
export function callInputs(events: readonly CallEvent[]): CallInput[] {
  return events.map((event) => ({ event, eventId: randomUUID(), headers: {}, payload: event.payload }));
}
