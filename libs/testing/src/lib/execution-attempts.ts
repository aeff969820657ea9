import { attemptStatus, type AttemptStatus, type CallState } from '@tollgate/call-life';

/** One attempt of a call as the end-to-end tests read it: its number, the model's word for it, where it went. */
export interface ObservedAttempt {
  attempt: number;
  status: AttemptStatus;
  provider_id: string | undefined;
}

/**
 * Execution's attempts of a call, read from its state of the call (the only record of them) and named by the model
 * (`attemptStatus`): a test asserts on the same words an operator reads.
 */
export async function executionAttempts(pg: { query(sql: string, params: unknown[]): Promise<{ rows: { life: CallState }[] }> }, intentId: string): Promise<ObservedAttempt[]> {
  const life = (await pg.query('SELECT life FROM execution.pending_call WHERE intent_id = $1', [intentId])).rows[0]?.life;
  if (!life) return [];
  return Object.keys(life.attempts).map(Number).sort((a, b) => a - b).flatMap((n) => {
    const status = attemptStatus(life, n);
    return status ? [{ attempt: n, status, provider_id: life.attempts[String(n)]!.dispatched?.providerId }] : [];
  });
}
