import { randomUUID } from 'node:crypto';
import { type DataSource, type EntityManager } from 'typeorm';
import { CALL_ROUTE, type CallEvent, type CallEventType, type CallService, type CallState, evolve, foldCall, initialState } from '@tollgate/call-life';
import { type EventDefinition } from '@tollgate/contracts';
import { createLogger } from '@tollgate/observability';
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
export interface CallWorkflow<R extends StoredLife, C = never, X = never, K = undefined, O extends CommandResult = never> {
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
  /** A command's I/O, after commit. What it returns is the command's result: the runner feeds it back (`decideResult`). */
  run?(command: C): Promise<O | void> | O | void;
  /** A command's result as an input, decided over the call's locked state like an event (`feedResult`). */
  decideResult?(input: ResultInput<R, O>): Decision<C, X>;
  /** The database results are fed back into (required with `decideResult`). */
  dataSource?: DataSource;
  /** A parked input of this workflow: the final answer its waiter needs (see EventHandler.onParked). */
  onParked?(event: EventDefinition<object>, ctx: ParkedContext<object>): Promise<void>;
  redriveAfterAnswer?: boolean;
}

/** A command's result: it names its call. */
export interface CommandResult {
  intentId: string;
}

export interface ResultInput<R extends StoredLife, O> {
  before: R | undefined;
  life: CallState;
  result: O;
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
export function runCallWorkflow<R extends StoredLife, C, X, K, O extends CommandResult>(wf: CallWorkflow<R, C, X, K, O>) {
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

async function applyWorkflow<R extends StoredLife, C, X, K, O extends CommandResult>(wf: CallWorkflow<R, C, X, K, O>, ctx: BatchContext): Promise<void> {
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

async function emitAll<R extends StoredLife, C, X, K, O extends CommandResult>(wf: CallWorkflow<R, C, X, K, O>, m: EntityManager, life: CallState, emit: readonly CallEmission[], causationId?: string): Promise<CallState> {
  let state = life;
  for (const e of emit) {
    if (!wf.outbox) throw new Error(`${wf.name} emits ${e.type} but has no outbox`);
    await appendEmission(wf.outbox, m, e, causationId);
    state = evolve(state, emittedFact(e));
  }
  return state;
}

/**
 * A command's I/O, then its result fed back as the workflow's input (`feedResult`), which may decide the next command
 * (a fallback to the next provider): the life runs on through the runner, never through a loop of the service's own.
 */
export function runCommand<R extends StoredLife, C, X, K, O extends CommandResult>(wf: CallWorkflow<R, C, X, K, O>, command: C): Promise<void> {
  const done = (async () => {
    const result = await wf.run?.(command);
    if (result !== undefined && wf.decideResult) await feedResult(wf, result);
  })();
  running.add(done);
  void done.catch(() => undefined).finally(() => running.delete(done));
  return done;
}

/** Commands running after their commit (and feeding their results back), in this process. */
const running = new Set<Promise<void>>();

/**
 * The most commands one process runs at once. Past it a consumer stops taking events until one ends — back-pressure
 * on the broker, not a queue in memory. Each provider's own bound is the execution service's (per provider).
 */
export const MAX_COMMANDS_IN_FLIGHT = 2048;

/** Resolves once fewer than MAX_COMMANDS_IN_FLIGHT commands run. */
export async function roomForCommands(): Promise<void> {
  while (running.size >= MAX_COMMANDS_IN_FLIGHT) await Promise.race([...running].map((p) => p.catch(() => undefined)));
}

/** Waits for every command in flight and the results it feeds back, including the commands those decide (a graceful stop). */
export async function drainCommands(): Promise<void> {
  while (running.size > 0) await Promise.allSettled([...running]);
}

/**
 * A command's result as an input, in a transaction of its own: the call's row locked, `decideResult`, its events
 * appended and folded, the state saved; then the commands it decided run after commit. Returns what it emitted
 * (nothing: the state already had that outcome — a second report of one attempt changes nothing).
 */
export async function feedResult<R extends StoredLife, C, X, K, O extends CommandResult>(wf: CallWorkflow<R, C, X, K, O>, result: O): Promise<CallEmission[]> {
  if (!wf.dataSource || !wf.decideResult) throw new Error(`${wf.name} takes no command results`);
  const { intentId } = result;
  const decided = await wf.dataSource.transaction(async (m) => {
    const before = (await wf.store.lock(m, [intentId])).get(intentId);
    const life = before?.life ?? initialState(intentId);
    const decision = wf.decideResult!({ before, life, result });
    const after = await emitAll(wf, m, life, decision.emit ?? []);
    await wf.store.save(m, [{ intentId, before, life: after, extra: decision.extra, inputs: [] }]);
    return decision;
  });
  for (const command of decided.commands ?? []) {
    void runCommand(wf, command).catch((err) => createLogger(wf.service).error({ err, intentId }, 'a command of the call failed after its commit'));
  }
  return decided.emit ?? [];
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
