import { digestOf } from '@tollgate/contracts';

/** G5.2: the key an agent sends in the request `_meta`, beside name and arguments. */
export const IDEMPOTENCY_META_KEY = 'assay/idempotencyKey';
/** How long a stored response can be replayed (at least 24 h is required; we keep 7 days). */
export const RESPONSE_RETENTION_MS = 7 * 24 * 60 * 60_000;
/** A dispatched call with no result this long past its deadline has stalled (execution died mid-call). */
export const STALL_GRACE_MS = 5_000;

/** 1 to 255 printable ASCII characters, no spaces (source 000). */
export function isValidOperationKey(key: unknown): key is string {
  return typeof key === 'string' && /^[\x21-\x7E]{1,255}$/.test(key);
}

/** What a repeat of an operation is compared on: the tool and its arguments (canonical JSON). */
export function requestHashOf(toolId: string, args: Record<string, unknown>): string {
  return digestOf({ toolId, arguments: args });
}

export interface CallProgress {
  finished: boolean;
  /** The provider has been called (a dispatch was recorded). */
  dispatched: boolean;
  deadlineAt: Date | null;
  createdAt: Date;
  /** The retention job erased the stored answer. */
  answerExpired?: boolean;
}

export type RepeatVerdict = 'replay' | 'in_progress' | 'stalled' | 'unavailable';

/** What the gateway answers to a repeat of a known operation key with the same request (B5). */
export function repeatVerdict(call: CallProgress, now: number): RepeatVerdict {
  if (call.answerExpired || now - call.createdAt.getTime() > RESPONSE_RETENTION_MS) return 'unavailable';
  if (call.finished) return 'replay';
  if (call.dispatched && call.deadlineAt && now > call.deadlineAt.getTime() + STALL_GRACE_MS) return 'stalled';
  return 'in_progress';
}
