import { IDEMPOTENCY_META_KEY, isOperationKeyLookalike, isValidOperationKey, readOperationKey, requestHashOf } from './operation-key';

describe('operation keys (G5.2, G8, B5)', () => {
  it('accepts 1-255 printable ASCII characters without spaces', () => {
    for (const ok of ['a', 'op-2026-12-02:ticket#1', '~'.repeat(255)]) expect(isValidOperationKey(ok)).toBe(true);
    for (const bad of ['', ' ', 'has space', 'x'.repeat(256), 'é', 'tab\there', 42, null, undefined]) expect(isValidOperationKey(bad)).toBe(false);
  });

  it('reads the key from _meta["assay/idempotencyKey"] only, and refuses a malformed one', () => {
    expect(readOperationKey({ [IDEMPOTENCY_META_KEY]: 'my-key-1' })).toEqual({ ok: true, key: 'my-key-1' });
    expect(readOperationKey({ progressToken: 3, 'x402/payment': {} })).toEqual({ ok: true });
    const bad = readOperationKey({ [IDEMPOTENCY_META_KEY]: 'has space' });
    expect(bad.ok).toBe(false);
  });

  it('refuses a key under any name that looks like an operation key instead of ignoring it', () => {
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
});
