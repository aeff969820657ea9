import fc from 'fast-check';
import { IDEMPOTENCY_META_KEY, isOperationKeyLookalike, isValidOperationKey, readOperationKey, repeatVerdict, requestHashOf, RESPONSE_RETENTION_MS } from './operation-key';

describe('operation keys (G5.2, G8, B5)', () => {
  it('accepts 1-255 printable ASCII characters without spaces', () => {
    for (const ok of ['a', 'op-2026-12-02:ticket#1', '~'.repeat(255)]) expect(isValidOperationKey(ok)).toBe(true);
    for (const bad of ['', ' ', 'has space', 'x'.repeat(256), 'é', 'tab\there', 42, null, undefined]) expect(isValidOperationKey(bad)).toBe(false);
  });

  it('reads the key from _meta["assay/idempotencyKey"] only, and refuses a malformed one (issue 21 point 1)', () => {
    expect(readOperationKey({ [IDEMPOTENCY_META_KEY]: 'my-key-1' })).toEqual({ ok: true, key: 'my-key-1' });
    expect(readOperationKey({ progressToken: 3, 'x402/payment': {} })).toEqual({ ok: true });
    const bad = readOperationKey({ [IDEMPOTENCY_META_KEY]: 'has space' });
    expect(bad.ok).toBe(false);
  });

  it('refuses a key under any name that looks like an operation key instead of ignoring it (issue 21 point 1)', () => {
    for (const name of ['operationKey', 'idempotencyKey', 'idempotency_key', 'Idempotency-Key', 'tollgate/operationKey', 'assay/operationKey', 'assay/idempotencykey', 'operation_key', 'idempotency']) {
      expect(isOperationKeyLookalike(name)).toBe(true);
      const read = readOperationKey({ [name]: 'my-key-1' });
      expect(read.ok).toBe(false);
      expect(read.ok ? '' : read.message).toContain(`_meta["${name}"]`);
      expect(read.ok ? '' : read.message).toContain(IDEMPOTENCY_META_KEY);
    }
    for (const name of [IDEMPOTENCY_META_KEY, 'progressToken', 'x402/payment', 'assay/contractVersion', 'keyword']) expect(isOperationKeyLookalike(name)).toBe(false);
  });

  it('hashes the same request the same way, whatever the key order', () => {
    expect(requestHashOf('t', { a: 1, b: [2, { c: 3, d: 4 }] })).toBe(requestHashOf('t', { b: [2, { d: 4, c: 3 }], a: 1 }));
    expect(requestHashOf('t', { a: 1 })).not.toBe(requestHashOf('u', { a: 1 }));
    expect(requestHashOf('t', { a: 1 })).not.toBe(requestHashOf('t', { a: '1' }));
  });

  it('decides a repeat: replay when finished, in progress, stalled only while reconciling, unavailable after retention', () => {
    const t0 = Date.UTC(2026, 11, 2);
    const base = { finished: false, reconciling: false, createdAt: new Date(t0) };
    expect(repeatVerdict({ ...base, finished: true }, t0 + 1000)).toBe('replay');
    expect(repeatVerdict(base, t0 + 1000)).toBe('in_progress');
    // Issue 21 point 8: long past its deadline with no unknown outcome recorded (the executor died, nobody reconciles
    // yet) is still "in progress"; "stalled, being reconciled" only once a reconciliation exists.
    expect(repeatVerdict(base, t0 + 3_600_000)).toBe('in_progress');
    expect(repeatVerdict({ ...base, finished: true, reconciling: true }, t0 + 1000)).toBe('stalled');
    expect(repeatVerdict({ ...base, finished: true }, t0 + RESPONSE_RETENTION_MS + 1)).toBe('unavailable');
    // Once the retention job erased the answer, a repeat is never replayed from nothing (issue 12 point 7).
    expect(repeatVerdict({ ...base, finished: true, answerExpired: true }, t0 + 1000)).toBe('unavailable');
  });

  it('property: a finished call within retention is replayed unless still reconciling, never run again', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: RESPONSE_RETENTION_MS }), fc.boolean(), (age, reconciling) => {
      const createdAt = new Date(1_800_000_000_000);
      expect(repeatVerdict({ finished: true, reconciling, createdAt }, createdAt.getTime() + age)).toBe(reconciling ? 'stalled' : 'replay');
    }));
  });
});
