import { randomUUID } from 'node:crypto';
import { type EntityManager } from 'typeorm';
import { CALL_ROUTE, type CallEvent, type CallEventType, type CallService, type CallState, evolve, foldCall, initialState } from '@tollgate/call-life';
import { type EventDefinition } from '@tollgate/contracts';
import { type OutboxWriter } from '../outbox/outbox-writer';
import { type BatchContext, type BatchEvent, type ParkedContext, perBatch } from '../inbox/handler';
import { type CallEmission, CALL_EVENTS, callEventDefinitions, callEventOf, emittedFact } from './call-events';

/** One call event as a workflow receives it: the model's typed fact, its id, its trace headers and its contract payload. */
export interface CallInput {
  event: CallEvent;
  eventId: string;
  headers: Record<string, string>;
  /** The whole decoded payload: fields the model does not keep (a request's arguments) are read from here. */
  payload: object;
}

/** What a workflow stores per call: at least the model's state, and whatever its table keeps beside it. */
export interface StoredLife {
  life: CallState;
}

/** The state of a call after a batch, as the workflow's store saves it. `extra`: what the decision adds for the row. */
export interface LifeChange<R extends StoredLife, X> {
  intentId: string;
  /** The row as it was loaded (undefined for a call the store has no row of). */
  before: R | undefined;
  life: CallState;
  extra: X | undefined;
  /** This batch's inputs for the call, in delivery order. */
  inputs: readonly CallInput[];
}

/** The table of a workflow: its rows locked for the transaction (in key order), then saved in one statement. */
export interface LifeStore<R extends StoredLife, X> {
  lock(m: EntityManager, intentIds: readonly string[]): Promise<Map<string, R>>;
  save(m: EntityManager, changes: readonly LifeChange<R, X>[]): Promise<void>;
}

/** What a workflow decides for one call: events (appended with the state, then folded into it), commands, row extras. */
export interface Decision<C, X> {
  emit?: CallEmission[];
  /** I/O to run after the transaction commits (an upstream call, waking a request), each in its call's trace. */
  commands?: C[];
  extra?: X;
}

export interface DecideInput<R extends StoredLife, K> {
  before: R | undefined;
  /** The state with this batch's inputs folded in. */
  life: CallState;
  inputs: readonly CallInput[];
  /** What `prepare` read for the whole batch (e.g. the tools the calls name). */
  context: K;
}

/**
 * One service's share of a call's life. `decide` is a pure function of the state and the inputs; everything it needs
 * from the database is read once per batch by `prepare`; I/O runs after commit through `run`.
 */
export interface CallWorkflow<R extends StoredLife, C = never, X = never, K = undefined> {
  /** The consumer's stable name (its inbox and offsets). */
  name: string;
  service: CallService;
  /** The route's decisions this workflow acts on: it is subscribed to what those steps read (CALL_ROUTE). */
  decisions: readonly string[];
  store: LifeStore<R, X>;
  /** Where emitted events go (required when the workflow emits). */
  outbox?: OutboxWriter;
  prepare?(m: EntityManager, lives: readonly CallState[]): Promise<K>;
  decide(input: DecideInput<R, K>): Decision<C, X>;
  run?(command: C): Promise<void> | void;
  /** A parked input of this workflow: the final answer its waiter needs (see EventHandler.onParked). */
  onParked?(event: EventDefinition<object>, ctx: ParkedContext<object>): Promise<void>;
  redriveAfterAnswer?: boolean;
}

/** What the route says a workflow reads: the union of its steps' `reads`. Fails at boot for a decision the route lacks. */
export function routeReads(service: CallService, decisions: readonly string[]): CallEventType[] {
  const steps = CALL_ROUTE.filter((s) => s.service === service && decisions.includes(s.decision));
  const missing = decisions.filter((d) => !steps.some((s) => s.decision === d));
  if (missing.length > 0) throw new Error(`${service}: the call route has no step ${missing.join(', ')}`);
  return [...new Set(steps.flatMap((s) => s.reads))];
}

/**
 * The runner: a workflow as a consumer. Each batch: load the batch's calls (locked), fold the inputs, decide, append
 * the emitted events and fold them too, save every state in one statement — all in the consumer's transaction, with
 * its inbox record — then run the commands after commit. No service writes this loop.
 */
export function runCallWorkflow<R extends StoredLife, C, X, K>(wf: CallWorkflow<R, C, X, K>) {
  const reads = routeReads(wf.service, wf.decisions);
  return {
    name: wf.name,
    ...perBatch(callEventDefinitions(reads), (ctx) => applyWorkflow(wf, ctx), {
      dedupedByModel: true, ...(wf.onParked ? { onParked: (event: EventDefinition<object>, ctx: ParkedContext<object>) => wf.onParked!(event, ctx) } : {}), ...(wf.redriveAfterAnswer ? { redriveAfterAnswer: true } : {}),
    }),
  };
}

/** How a batch's inputs are run: each call's work inside its cause's trace, commands handed to the consumer's afterCommit. */
export interface InputHooks<C> {
  within?<T>(cause: CallInput, fn: () => Promise<T>): Promise<T>;
  afterCommit?(command: C): void;
}

async function applyWorkflow<R extends StoredLife, C, X, K>(wf: CallWorkflow<R, C, X, K>, ctx: BatchContext): Promise<void> {
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
    afterCommit: (command) => ctx.afterCommit(() => wf.run?.(command)),
  });
}

/**
 * The runner's step over typed inputs, in the caller's transaction (the consumer's, or a test's): load, fold, decide,
 * emit, save. Returns the commands decided (already handed to `afterCommit` when given). The last input of a call is
 * the cause of what is decided for it (its id is the emitted events' causation, its trace theirs).
 */
export async function applyCallInputs<R extends StoredLife, C, X, K>(wf: CallWorkflow<R, C, X, K>, m: EntityManager, inputs: readonly CallInput[], hooks: InputHooks<C> = {}): Promise<C[]> {
  const byCall = new Map<string, CallInput[]>();
  for (const i of inputs) byCall.set(i.event.payload.intentId, [...(byCall.get(i.event.payload.intentId) ?? []), i]);
  const rows = await wf.store.lock(m, [...byCall.keys()]);
  const folded = [...byCall].map(([intentId, mine]) => ({ intentId, mine, life: foldCall(intentId, mine.map((i) => i.event), rows.get(intentId)?.life ?? initialState(intentId)) }));
  const context = wf.prepare ? await wf.prepare(m, folded.map((f) => f.life)) : (undefined as K);
  const within = hooks.within ?? ((_cause, fn) => fn());
  const changes: LifeChange<R, X>[] = [];
  const commands: C[] = [];
  for (const { intentId, mine, life } of folded) {
    const before = rows.get(intentId);
    const cause = mine.at(-1)!;
    const decision = wf.decide({ before, life, inputs: mine, context });
    const after = await within(cause, () => emitAll(wf, m, life, decision.emit ?? [], cause.eventId));
    changes.push({ intentId, before, life: after, extra: decision.extra, inputs: mine });
    for (const command of decision.commands ?? []) {
      commands.push(command);
      if (hooks.afterCommit) await within(cause, async () => hooks.afterCommit!(command));
    }
  }
  await wf.store.save(m, changes);
  return commands;
}

async function emitAll<R extends StoredLife, C, X, K>(wf: CallWorkflow<R, C, X, K>, m: EntityManager, life: CallState, emit: readonly CallEmission[], causationId: string): Promise<CallState> {
  let state = life;
  for (const e of emit) {
    if (!wf.outbox) throw new Error(`${wf.name} emits ${e.type} but has no outbox`);
    await appendEmission(wf.outbox, m, e, causationId);
    state = evolve(state, emittedFact(e));
  }
  return state;
}

/** Appends one emission through its contract (the outbox validates the payload). */
export function appendEmission(outbox: OutboxWriter, m: EntityManager, e: CallEmission, causationId?: string): Promise<unknown> {
  const definition: EventDefinition<object> = CALL_EVENTS[e.type];
  return outbox.append(m, definition, e.payload, causationId ? { causationId } : {});
}

/** Facts as inputs of no particular delivery (each its own id, no trace): for tests and tools that feed a workflow. */
export function callInputs(events: readonly CallEvent[]): CallInput[] {
  return events.map((event) => ({ event, eventId: randomUUID(), headers: {}, payload: event.payload }));
}
