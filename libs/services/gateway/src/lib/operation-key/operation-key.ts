import { digestOf } from '@tollgate/contracts';

/** G5.2: the key an agent sends in the request `_meta`, beside name and arguments. */
export const IDEMPOTENCY_META_KEY = 'assay/idempotencyKey';

/** 1 to 255 printable ASCII characters, no spaces (source 000). */
export function isValidOperationKey(key: unknown): key is string {
  return typeof key === 'string' && /^[\x21-\x7E]{1,255}$/.test(key);
}

/** Names that mean "operation key" once the namespace, case and punctuation are dropped. */
const LOOKALIKE_NAMES = new Set(['idempotencykey', 'idempotency', 'operationkey', 'opkey', 'dedupkey', 'deduplicationkey']);

/** A `_meta` name that an agent plausibly meant as the operation key but is not `assay/idempotencyKey`. */
export function isOperationKeyLookalike(name: string): boolean {
  if (name === IDEMPOTENCY_META_KEY) return false;
  const bare = name.slice(name.lastIndexOf('/') + 1).toLowerCase().replace(/[^a-z0-9]/g, '');
  return LOOKALIKE_NAMES.has(bare);
}

export type OperationKeyRead = { ok: true; key?: string } | { ok: false; message: string };

/**
 * G5.2, B5: the operation key of a request, read from the one documented name. A malformed key, or a key under any
 * other name that looks like one (`operationKey`, `idempotency_key`, `tollgate/operationKey`…), is refused rather than
 * ignored: ignoring it would make the agent's retry a second purchase.
 */
export function readOperationKey(meta: Record<string, unknown>): OperationKeyRead {
  const lookalike = Object.keys(meta).find(isOperationKeyLookalike);
  if (lookalike !== undefined) {
    return { ok: false, message: `_meta["${lookalike}"] is not read as an operation key: send it as _meta["${IDEMPOTENCY_META_KEY}"] (1 to 255 printable ASCII characters without spaces), the same one for every retry of this operation.` };
  }
  const key = meta[IDEMPOTENCY_META_KEY];
  if (key === undefined) return { ok: true };
  if (!isValidOperationKey(key)) {
    return { ok: false, message: `_meta["${IDEMPOTENCY_META_KEY}"] must be 1 to 255 printable ASCII characters without spaces. Send a valid key, the same one for every retry of this operation.` };
  }
  return { ok: true, key };
}

/** What a repeat of an operation is compared on: the tool and its arguments (canonical JSON). */
export function requestHashOf(toolId: string, args: Record<string, unknown>): string {
  return digestOf({ toolId, arguments: args });
}
