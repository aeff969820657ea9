/**
 * What a failure says about an event. Only three kinds of failure say nothing about the event
 * itself, and only they are retried without parking it:
 *
 * - the connection to the database was lost or could not be made (SQLSTATE class 08, a socket error, the driver's own
 *   "connection terminated" errors, or a server refusing more connections: 53300);
 * - the server is shutting down or starting (57P01 admin shutdown, 57P02 crash shutdown, 57P03 cannot connect now);
 * - the transaction lost a race (40001 serialization failure, 40P01 deadlock).
 *
 * Everything else — the handler's own error, a constraint the data breaks, a value out of range, a statement timeout
 * (57014), a cancelled query, a Node `ERR_*` argument error, disk full — is the event's: retried a bounded number of
 * times, then parked so the events behind it go on.
 */
export type FailureKind = 'transient' | 'deterministic';

/**
 * The transaction lost a race it cannot see from its reads (a unique claim another transaction committed meanwhile):
 * raised as PostgreSQL's serialization failure, so the batch is retried and its reads see the winner.
 */
export class LostRace extends Error {
  readonly code = '40001';
}

const TRANSIENT_SQLSTATES = new Set(['53300', '57P01', '57P02', '57P03', '40001', '40P01']);
/** Socket-level codes of Node's system errors: the peer went away or could not be reached. */
const CONNECTION_CODES = new Set(['ECONNRESET', 'ECONNREFUSED', 'ECONNABORTED', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'EHOSTDOWN', 'ENETUNREACH', 'ENETDOWN', 'ENOTCONN', 'EAI_AGAIN']);
/** Errors pg, pg-pool and TypeORM raise without a code when the connection is gone or cannot be had. */
const CONNECTION_MESSAGES = /^(Connection terminated|Client has encountered a connection error and is not queryable|timeout exceeded when trying to connect|Connection is not established|Cannot use a pool after calling end on the pool|Client was closed and is not queryable)/;

export function failureKind(error: unknown): FailureKind {
  return transientIn(error, 0) ? 'transient' : 'deterministic';
}

/** Shorthand of `failureKind(error) === 'transient'`. */
export function isTransientFailure(error: unknown): boolean {
  return failureKind(error) === 'transient';
}

function transientIn(error: unknown, depth: number): boolean {
  if (error === null || typeof error !== 'object' || depth > 3) return false;
  const e = error as { code?: unknown; message?: unknown; driverError?: unknown; errors?: unknown; cause?: unknown };
  if (typeof e.code === 'string') {
    if (/^08[0-9A-Z]{3}$/.test(e.code) || TRANSIENT_SQLSTATES.has(e.code) || CONNECTION_CODES.has(e.code)) return true;
  } else if (typeof e.message === 'string' && CONNECTION_MESSAGES.test(e.message)) {
    return true;
  }
  // TypeORM's QueryFailedError wraps the driver's error; Node's happy-eyeballs connect raises an AggregateError.
  if (e.driverError !== undefined && transientIn(e.driverError, depth + 1)) return true;
  if (Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every((x) => transientIn(x, depth + 1))) return true;
  return false;
}

/** Back-off before try `attempt` (2, 3, …) of a failing event: 100 ms doubling, at most 2 s. */
export function retryDelayMs(attempt: number): number {
  return Math.min(100 * 2 ** Math.max(0, attempt - 2), 2000);
}

/**
 * How long one batch may keep failing "transiently" while the database answers other queries before the failure is
 * taken as the batch's own (split, bounded retries, parked): a race lost every time, or a connection error that only
 * this event provokes, must not hold the partition for every tenant.
 */
export const TRANSIENT_BUDGET_MS = 20_000;
/** A consumer that has been failing transiently this long is reported not ready. */
export const DEGRADED_AFTER_MS = 2_000;
