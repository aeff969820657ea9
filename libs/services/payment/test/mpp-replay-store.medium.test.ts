/**
 * Medium tier (real PostgreSQL with payment's migrations): MPP's replay store (mppx's `Store.AtomicStore` on
 * PostgreSQL). A credential is claimed once: two claims of one key in overlapping transactions — the second waits on
 * the first's row — let exactly one through; an expired claim can be claimed again; a claim in a transaction that
 * rolls back leaves the key free (the call that claimed it never happened). `update` runs under a row lock. The
 * e2e tests pay through mppx itself, which calls this store.
 */
import { type DataSource } from 'typeorm';
import { openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase, overlappingTransactions } from '@tollgate/testing';
import { PgReplayStore } from '../src/lib/mpp/pg-replay-store';
import { paymentDataSourceOptions } from '../src/lib/payment.datasource-options';

/** mppx's `Store.tryClaim` calls the store's own `tryClaim` (mppx itself cannot load under jest: it is ESM only). */
const Store = { tryClaim: (store: PgReplayStore, key: string, expires: number) => store.tryClaim(key, expires) };

describe('PgReplayStore (mppx AtomicStore on PostgreSQL)', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  let ds: DataSource;
  const later = () => Date.now() + 60_000;

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_pay_mpp_replay');
    ds = await openServiceDataSource(paymentDataSourceOptions(db.url));
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  it('two overlapping claims of one credential: exactly one wins', async () => {
    const [a, b] = await overlappingTransactions(ds,
      (m) => Store.tryClaim(new PgReplayStore(m), 'mpp:credential:c-1', later()),
      (m) => Store.tryClaim(new PgReplayStore(m), 'mpp:credential:c-1', later()));
    expect([a, b].sort()).toEqual([false, true]);
    expect(await Store.tryClaim(new PgReplayStore(ds), 'mpp:credential:c-1', later())).toBe(false);
  });

  it('an expired claim is free again; a rolled-back claim never happened', async () => {
    expect(await Store.tryClaim(new PgReplayStore(ds), 'k-expired', Date.now() - 1_000)).toBe(true);
    expect(await Store.tryClaim(new PgReplayStore(ds), 'k-expired', later())).toBe(true);
    await expect(ds.transaction(async (m) => {
      expect(await Store.tryClaim(new PgReplayStore(m), 'k-rolled-back', later())).toBe(true);
      throw new Error('the call failed');
    })).rejects.toThrow('the call failed');
    expect(await Store.tryClaim(new PgReplayStore(ds), 'k-rolled-back', later())).toBe(true);
  });

  it('get, put, delete and update behave as mppx expects', async () => {
    const store = new PgReplayStore(ds);
    await store.put('k-value', { n: 1 });
    expect(await store.get('k-value')).toEqual({ n: 1 });
    const result = await store.update('k-value', (current: unknown) => ({ op: 'set', value: { n: (current as { n: number }).n + 1 }, result: 'bumped' }));
    expect(result).toBe('bumped');
    expect(await store.get('k-value')).toEqual({ n: 2 });
    await store.delete('k-value');
    expect(await store.get('k-value')).toBeNull();
  });
});
