import { createLogger, inRecordedContext } from '@tollgate/observability';
import { type CallWorkflow, type CommandResult, type LifeChange, type StoredLife } from './workflow.types';
import { runCommand } from './commands';
import { bookPostings, type PostingEffect, writeDecision } from './decision';

/** How many due calls one transaction takes. */
const DUE_BATCH = 100;

/**
 * Due work, one batch: the calls whose wake-up has come (claimed, locked), each decided by `decideDue` over its state,
 * its postings and events written and folded, every state saved — one transaction; then its commands run. Safe from
 * several instances at once (claimed rows are skipped by the others). Returns how many calls something was decided for.
 */
export async function runDueWork<R extends StoredLife, C, X, K, O extends CommandResult>(wf: CallWorkflow<R, C, X, K, O>, limit = DUE_BATCH): Promise<number> {
  const { dataSource, store, decideDue } = wf;
  if (!dataSource || !decideDue || !store.claimDue) throw new Error(`${wf.name} has no due work`);
  const commands: C[] = [];
  const changed = await dataSource.transaction(async (m) => {
    const changes: LifeChange<R, X>[] = [];
    const postings: PostingEffect[] = [];
    for (const before of await store.claimDue!(m, limit)) {
      const decision = decideDue.call(wf, { before, life: before.life });
      if (!decision.emit?.length && !decision.postings?.length && !decision.commands?.length) continue;
      const intentId = before.life.intentId;
      const write = () => writeDecision(wf, m, before.life, decision, undefined, postings);
      const headers = wf.traceOf?.(before);
      const life = headers ? await inRecordedContext(`${wf.name} due work`, headers, intentId, write) : await write();
      changes.push({ intentId, before, life, extra: decision.extra, inputs: [] });
      commands.push(...(decision.commands ?? []));
    }
    await bookPostings(wf, m, postings);
    if (changes.length > 0) await store.save(m, changes);
    return changes.length;
  });
  for (const command of commands) void runCommand(wf, command).catch((err) => createLogger(wf.service).error({ err }, 'a command of due work failed after its commit'));
  return changed;
}

/** The runner's clock for a workflow's due work: a batch every `dueEveryMs` (at once again while batches are full). */
export interface DueWork {
  start(): void;
  /** Looks for due calls now (a decision just asked for a wake-up of 0 ms), or right after the batch running. */
  nudge(): void;
  /** Stops the clock and waits for the batch running (a graceful stop). */
  stop(): Promise<void>;
}

export function dueWork<R extends StoredLife, C, X, K, O extends CommandResult>(wf: CallWorkflow<R, C, X, K, O>): DueWork {
  const every = wf.dueEveryMs ?? 1000;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let stopped = true;
  let again = false;
  const tick = () => {
    timer = undefined;
    again = false;
    running = runDueWork(wf)
      .catch((err) => {
        createLogger(wf.service).warn({ err }, 'due work failed; tried again on the next tick');
        return 0;
      })
      .then((n) => {
        running = undefined;
        if (!stopped) timer = setTimeout(tick, n >= DUE_BATCH || again ? 0 : every);
      });
  };
  return {
    start() {
      stopped = false;
      timer = setTimeout(tick, every);
    },
    nudge() {
      if (stopped) return;
      if (running) {
        again = true;
        return;
      }
      clearTimeout(timer);
      tick();
    },
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
