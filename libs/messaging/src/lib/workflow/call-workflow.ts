import { randomUUID } from 'node:crypto';
import { type DataSource, type EntityManager } from 'typeorm';
import { CALL_ROUTE, type CallEvent, type CallEventType, type CallService, type CallState, foldCall, initialState } from '@tollgate/call-life';
import { type EventDefinition } from '@tollgate/contracts';
import { createLogger } from '@tollgate/observability';
import { type OutboxWriter } from '../outbox/outbox-writer';
import { type BatchContext, type BatchEvent, type ParkedContext, perBatch } from '../inbox/handler';
import { callEventDefinitions, callEventOf } from './call-events';
import { runCommand, roomForCommands } from './commands';
import { type Decision, writeDecision } from './decision';
import { dueWork } from './due-work';
import { answerParked } from './parked';

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
  /** The decision's wake-up: the store keeps when the call is due (`claimDue` finds it then). */
  wakeInMs?: number;
}

/** The table of a workflow: its rows locked for the transaction (in key order), then saved in one statement. */
export interface LifeStore<R extends StoredLife, X> {
  lock(m: EntityManager, intentIds: readonly string[]): Promise<Map<string, R>>;
  save(m: EntityManager, changes: readonly LifeChange<R, X>[]): Promise<void>;
  /** Calls whose wake-up time has come, locked (another instance skips them), the longest due first. */
  claimDue?(m: EntityManager, limit: number): Promise<R[]>;
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
  /** The schema of the double-entry ledger its postings are booked in (required when a decision books one). */
  ledger?: string;
  prepare?(m: EntityManager, lives: readonly CallState[]): Promise<K>;
  decide(input: DecideInput<R, K>): Decision<C, X>;
  /** A command's I/O, after commit. What it returns is the command's result: the runner feeds it back (`decideResult`). */
  run?(command: C): Promise<O | void> | O | void;
  /** A command's result as an input, decided over the call's locked state like an event (`feedResult`). */
  decideResult?(input: ResultInput<R, O>): Decision<C, X>;
  /** The database results are fed back into (required with `decideResult`). */
  dataSource?: DataSource;
  /**
   * Due work: a call whose wake-up (`Decision.wakeInMs`) has come, decided over its locked state like an input. The
   * runner looks for due calls every `dueEveryMs` (`dueWork`); no service keeps a timer or a loop of its own.
   */
  decideDue?(input: DueInput<R>): Decision<C, X>;
  dueEveryMs?: number;
  /** The trace a due call's work joins (what opened its wake-up). */
  traceOf?(row: R): Record<string, string> | undefined;
  /**
   * A parked input of this workflow, decided like any input: the final answer whoever waits needs (`answerParked`).
   * Over the bare call (`initialState`) when recording it is what fails.
   */
  decideParked?(input: ParkedInput): Decision<C, X>;
  /** A parked input's side effect outside the call's state (e.g. waking a waiting request everywhere). */
  onParked?(event: EventDefinition<object>, ctx: ParkedContext<object>): Promise<void>;
  redriveAfterAnswer?: boolean;
}

/** A command's result: it names its call. */
export interface CommandResult {
  intentId: string;
}

export interface DueInput<R extends StoredLife> {
  before: R;
  life: CallState;
}

export interface ParkedInput {
  life: CallState;
  /** The event that was parked. */
  event: EventDefinition<object>;
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
  const parked = async (event: EventDefinition<object>, ctx: ParkedContext<object>) => {
    await answerParked(wf, event, ctx);
    await wf.onParked?.(event, ctx);
  };
  return {
    name: wf.name,
    ...perBatch(callEventDefinitions(reads), (ctx) => applyWorkflow(wf, ctx), {
      dedupedByModel: true, ...(wf.onParked || wf.decideParked ? { onParked: parked } : {}), ...(wf.redriveAfterAnswer ? { redriveAfterAnswer: true } : {}),
    }),
    // Due work (a call's scheduled wake-up) is an input the runner delivers too, on its own clock.
    ...(wf.decideDue ? { due: dueWork(wf) } : {}),
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
    const after = await within(cause, () => writeDecision(wf, m, life, decision, cause.eventId));
    changes.push({ intentId, before, life: after, extra: decision.extra, inputs: mine, ...(decision.wakeInMs !== undefined ? { wakeInMs: decision.wakeInMs } : {}) });
    for (const command of decision.commands ?? []) {
      commands.push(command);
      if (hooks.afterCommit) await within(cause, async () => hooks.afterCommit!(command));
    }
  }
  await wf.store.save(m, changes);
  return commands;
}

/** Facts as inputs of no particular delivery (each its own id, no trace): for tests and tools that feed a workflow. */
export function callInputs(events: readonly CallEvent[]): CallInput[] {
  return events.map((event) => ({ event, eventId: randomUUID(), headers: {}, payload: event.payload }));
}
