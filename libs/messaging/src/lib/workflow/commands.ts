import { type EntityManager } from 'typeorm';
import { initialState } from '@tollgate/call-life';
import { createLogger } from '@tollgate/observability';
import { type CallEmission } from './call-events';
import { type CallWorkflow, type CommandResult, type StoredLife } from './workflow.types';
import { type Decision, writeDecision } from './decision';

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
  if (!wf.dataSource) throw new Error(`${wf.name} takes no command results`);
  const decided = await wf.dataSource.transaction((m) => applyResult(wf, m, result));
  for (const command of decided.commands ?? []) {
    void runCommand(wf, command).catch((err) => createLogger(wf.service).error({ err, intentId: result.intentId }, 'a command of the call failed after its commit'));
  }
  return decided.emit ?? [];
}

/**
 * A result decided in the caller's transaction (a worker that records its own step with it): the call's row locked,
 * `decideResult`, its effects written, the state saved. Returns the decision (its commands are the caller's to run).
 */
export async function applyResult<R extends StoredLife, C, X, K, O extends CommandResult>(wf: CallWorkflow<R, C, X, K, O>, m: EntityManager, result: O, causationId?: string): Promise<Decision<C, X>> {
  if (!wf.decideResult) throw new Error(`${wf.name} takes no command results`);
  const { intentId } = result;
  const before = (await wf.store.lock(m, [intentId])).get(intentId);
  const life = before?.life ?? initialState(intentId);
  const decision = wf.decideResult({ before, life, result });
  const after = await writeDecision(wf, m, life, decision, causationId);
  await wf.store.save(m, [{ intentId, before, life: after, extra: decision.extra, inputs: [] }]);
  return decision;
}
