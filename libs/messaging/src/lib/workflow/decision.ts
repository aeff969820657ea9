import { type EntityManager } from 'typeorm';
import { type Entry } from '@tollgate/accounting';
import { type CallState, evolve } from '@tollgate/call-life';
import { type EventDefinition } from '@tollgate/contracts';
import { applyPosting, applyPostings } from '@tollgate/persistence';
import { type OutboxWriter } from '../outbox/outbox-writer';
import { type CallEmission, CALL_EVENTS, emittedFact } from './call-events';

/** A balanced posting a decision books in its transaction, in the workflow's ledger; its id makes it happen once. */
export interface PostingEffect {
  id: string;
  kind: string;
  entries: readonly Entry[];
  intentId: string;
  /**
   * The id is new (never booked before): its one guarded debit gates the posting, so a decision that read the locked
   * balance books it in one statement (a shortfall still throws: the decision was made on other facts).
   */
  fresh?: boolean;
}

/** What a workflow decides for one call: events (appended with the state, then folded into it), commands, row extras. */
export interface Decision<C, X> {
  emit?: CallEmission[];
  /** Balanced postings booked inside the transaction (the workflow's `ledger` schema), before the events. */
  postings?: PostingEffect[];
  /** I/O to run after the transaction commits (an upstream call, waking a request), each in its call's trace. */
  commands?: C[];
  extra?: X;
  /** Events of the service that are not facts of the call's life (payment's HoldReleased), appended after `emit`. */
  announce?: { event: EventDefinition<object>; payload: object }[];
  /** Wake this call up again after this many ms: the runner then feeds the workflow's `decideDue` (due work). */
  wakeInMs?: number;
}

/** Where a decision's effects go: the outbox for its events, the ledger schema for its postings. */
export interface EffectTargets {
  name: string;
  outbox?: OutboxWriter;
  ledger?: string;
}

/**
 * A decision's effects, written in the caller's transaction: its postings (or, given `book`, gathered there to be
 * booked with the rest of the batch's by `bookPostings`), then its events appended through their contracts and folded
 * into the state, then what it announces. Returns the state with the emitted facts in it.
 */
export async function writeDecision(wf: EffectTargets, m: EntityManager, life: CallState, decision: Pick<Decision<unknown, unknown>, 'emit' | 'postings' | 'announce'>, causationId?: string, book?: PostingEffect[]): Promise<CallState> {
  if (book) book.push(...(decision.postings ?? []));
  else await bookPostings(wf, m, decision.postings ?? []);
  let state = life;
  for (const e of decision.emit ?? []) {
    if (!wf.outbox) throw new Error(`${wf.name} emits ${e.type} but has no outbox`);
    await appendEmission(wf.outbox, m, e, causationId);
    state = evolve(state, emittedFact(e));
  }
  for (const a of decision.announce ?? []) {
    if (!wf.outbox) throw new Error(`${wf.name} announces ${a.event.type} but has no outbox`);
    await wf.outbox.append(m, a.event, a.payload, causationId ? { causationId } : {});
  }
  return state;
}

/**
 * The postings a batch decided, in the workflow's ledger. Several with no fresh one among them (a batch of calls
 * settled together) are booked in one statement, not one per call; otherwise each alone, in the order decided (a
 * fresh posting's one guarded debit gates it, and may need the posting before it: an outside payment's deposit).
 */
export async function bookPostings(wf: EffectTargets, m: EntityManager, postings: readonly PostingEffect[]): Promise<void> {
  if (postings.length === 0) return;
  if (!wf.ledger) throw new Error(`${wf.name} books a posting but has no ledger`);
  if (postings.length > 1 && !postings.some((p) => p.fresh)) {
    await applyPostings(m, wf.ledger, postings);
    return;
  }
  for (const p of postings) await applyPosting(m, wf.ledger, p.id, p.kind, p.entries, p.intentId, p.fresh ? { freshId: true } : {});
}

/** Appends one emission through its contract (the outbox validates the payload). */
export function appendEmission(outbox: OutboxWriter, m: EntityManager, e: CallEmission, causationId?: string): Promise<unknown> {
  const definition: EventDefinition<object> = CALL_EVENTS[e.type];
  return outbox.append(m, definition, e.payload, causationId ? { causationId } : {});
}
