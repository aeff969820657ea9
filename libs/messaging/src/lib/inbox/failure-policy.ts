/**
 * Whether a failure says nothing about the event itself: the database could not be reached, the server is shutting
 * down or out of resources, or the transaction lost a serialization or deadlock race. Such failures are retried
 * without limit and never park an event; anything else (the handler's own error, a constraint the data breaks, a value
 * out of range) is the event's and, repeated, parks it.
 */
export function isTransientFailure(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') {
    const message = error instanceof Error ? error.message : '';
    return /Connection terminated|connect ECONNREFUSED|Client has encountered a connection error|timeout exceeded when trying to connect|Connection is not established|Pool is (ended|closed)/i.test(message);
  }
  // Node socket errors (ECONNRESET…) and SQLSTATE classes 08 (connection), 53 (resources), 57 (operator intervention),
  // 40 (transaction rollback: serialization failure, deadlock).
  return code.startsWith('E') || /^(08|53|57|40)/.test(code);
}

/** Back-off before try `attempt` (2, 3, …) of a failing event: 100 ms doubling, at most 2 s. */
export function retryDelayMs(attempt: number): number {
  return Math.min(100 * 2 ** Math.max(0, attempt - 2), 2000);
}
