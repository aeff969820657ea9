import { type DataSource, type EntityManager } from 'typeorm';
import { type CallEvent, type CallService, type CallState } from '@tollgate/call-life';
import { type EventDefinition } from '@tollgate/contracts';
import { type OutboxWriter } from '../outbox/outbox-writer';
import { type ParkedContext } from '../inbox/handler';
import { type Decision } from './decision';

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
  /**
   * The rows a batch of events is decided over, when that is less than `lock` (a workflow whose `prepare` reads what
   * it decides on under locks of its own); results, due work and parked inputs still use `lock`.
   */
  lockForEvents?(m: EntityManager, intentIds: readonly string[]): Promise<Map<string, R>>;
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
  /** The consumer's stable name (its inbox and offsets): the route's steps that name it are what it runs and reads. */
  name: string;
  service: CallService;
  store: LifeStore<R, X>;
  /** Where emitted events go (required when the workflow emits). */
  outbox?: OutboxWriter;
  /** The schema of the double-entry ledger its postings are booked in (required when a decision books one). */
  ledger?: string;
  /** Reads for the whole batch (after the rows are locked): `lives` folded, `inputs` as delivered (payload fields the model does not keep). */
  prepare?(m: EntityManager, lives: readonly CallState[], inputs: readonly CallInput[]): Promise<K>;
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
  /** Its decoded payload (undefined when it broke its contract). */
  payload?: object;
  /** The store had a row of the call (undefined over the bare call). */
  stored?: boolean;
}

export interface ResultInput<R extends StoredLife, O> {
  before: R | undefined;
  life: CallState;
  result: O;
}

