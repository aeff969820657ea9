import { callSeconds, callsTotal } from '@tollgate/observability';

type Answer = { _meta?: Record<string, unknown> };

/** Refusals that are not the caller's fault or choice: the provider or the platform failed the call. */
const FAILED = new Set(['PROVIDER_SYSTEM_ERROR', 'PROVIDER_REQUEST_ERROR', 'PROVIDER_CONTRACT_VIOLATION', 'TOOL_ALL_BINDINGS_FAILED', 'INTERNAL_SERVER_ERROR']);
/** Answers that do not know the outcome yet. */
const UNKNOWN = new Set(['IDEMPOTENCY_RESULT_UNAVAILABLE', 'IDEMPOTENCY_ATTEMPT_STALLED', 'IDEMPOTENCY_IN_PROGRESS']);

/** What a call's answer says about it, for the metrics: ok, refused, failed or unknown, and the code when there is one. */
export function callOutcomeOf(answer: Answer): { outcome: 'ok' | 'refused' | 'failed' | 'unknown'; code: string } {
  const code = (answer._meta?.['assay/error'] as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string') return { outcome: 'ok', code: '' };
  return { outcome: FAILED.has(code) ? 'failed' : UNKNOWN.has(code) ? 'unknown' : 'refused', code };
}

/** Counts a tool call's answer and its time in the process's metrics. */
export async function measuredCall<T extends Answer>(call: Promise<T>): Promise<T> {
  const end = callSeconds.startTimer();
  const answer = await call;
  const { outcome, code } = callOutcomeOf(answer);
  callsTotal.inc({ outcome, code });
  end({ outcome });
  return answer;
}
