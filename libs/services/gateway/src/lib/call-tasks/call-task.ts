import { ANSWER_RETENTION_MS, failedToRun, isAnswered, status, wasCancelled } from '@tollgate/call-life';
import { type StoredCall } from '../calls/calls.repository';
import { answerOf } from '../call-tool/call-answer';
import { TASKS_EXTENSION } from '../call-tool/tasks-extension';

/** How often a client should poll a call still running. */
export const TASK_POLL_INTERVAL_MS = 1000;

export type TaskStatus = 'working' | 'completed' | 'failed' | 'cancelled';

/** JSON-RPC's internal error: a task whose call the provider or the platform could not run. */
export const TASK_FAILED_CODE = -32603;

/** A task as `tasks/get` and `CreateTaskResult` carry it (the extension's DetailedTask, without input_required). */
export interface CallTask {
  taskId: string;
  status: TaskStatus;
  statusMessage: string;
  createdAt: string;
  lastUpdatedAt: string;
  ttlMs: number;
  pollIntervalMs?: number;
  result?: Record<string, unknown>;
  /** `failed` only: the JSON-RPC error shape, its data the agent error and the receipt (nothing charged). */
  error?: { code: number; message: string; data: Record<string, unknown> };
}

const WORKING_MESSAGES: Record<string, string> = {
  requested: 'The call is recorded; payment is deciding.',
  held: 'The price is held; the call is about to be sent to a provider.',
  dispatched: 'The call was sent to a provider; waiting for its result.',
  result_received: 'The provider answered; the result is being checked.',
  outcome_unknown: 'The provider did not confirm the outcome; it is being reconciled by the operation key.',
};

/**
 * A paid call as a task: the task is the call's life — its id is the call's intentId, created in
 * the same transaction as CallRequested — so any replica answers for it. Answered: `completed` with the answer an
 * agent gets for the call (receipt included; a tool that ran and reported an error, or payment's refusal, is a
 * completed tool result with isError), or `failed` when the provider or the platform could not run it (the extension
 * keeps `failed` for protocol-level errors: the error inline, no result). Cancelled by its agent before dispatch: `cancelled`. Otherwise `working`, with what the call waits for.
 * A task lives as long as the call's answer is kept.
 */
export function taskOf(call: StoredCall, now: Date = new Date()): CallTask {
  const base = { taskId: call.intent_id, createdAt: call.created_at.toISOString(), lastUpdatedAt: now.toISOString(), ttlMs: ANSWER_RETENTION_MS };
  if (wasCancelled(call.life)) return { ...base, status: 'cancelled', statusMessage: 'Cancelled by the agent before it was sent; nothing was performed and the hold is released.' };
  if (failedToRun(call.life)) {
    const answer = answerOf(call);
    const error = (answer._meta?.['assay/error'] ?? {}) as { message?: string };
    return { ...base, status: 'failed', statusMessage: 'The call could not be run; nothing was charged.', error: { code: TASK_FAILED_CODE, message: error.message ?? 'The call could not be run.', data: answer._meta ?? {} } };
  }
  if (isAnswered(call.life)) return { ...base, status: 'completed', statusMessage: 'The call has its answer.', result: { ...answerOf(call), resultType: 'complete' } };
  const s = status(call.life) ?? 'requested';
  return { ...base, status: 'working', statusMessage: WORKING_MESSAGES[s] ?? 'The call is running.', pollIntervalMs: TASK_POLL_INTERVAL_MS };
}

/** Whether the request's client declared the tasks extension (2026-07-28 per-request client capabilities). */
export function declaresTasks(clientCapabilities: unknown): boolean {
  const extensions = (clientCapabilities as { extensions?: Record<string, unknown> } | undefined)?.extensions;
  return !!extensions && typeof extensions === 'object' && TASKS_EXTENSION in extensions;
}
