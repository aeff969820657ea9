/**
 * Medium tier (real PostgreSQL with payment's migrations): a hold's posting debits first (its id is new), so a wallet
 * too short for it leaves no trace — no posting, no entry, no balance change — without a savepoint, and concurrent
 * holds never take more than the wallet holds.
 */
import { randomUUID } from 'node:crypto';
import { type DataSource } from 'typeorm';
import { accountKey, Movements } from '@tollgate/accounting';
import { applyPosting, balanceOf, InsufficientBalance, openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase } from '@tollgate/testing';
import { paymentDataSourceOptions } from '../src/lib/payment.datasource-options';

jest.setTimeout(60_000);

describe('a hold posts only what the wallet holds (medium tier)', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;
  const owner = `owner-${randomUUID()}`;
  const usdc = (minor: bigint) => ({ minor, asset: 'USDC' });
  const available = () => balanceOf(ds.manager, 'payment', accountKey({ kind: 'available', ownerId: owner }), 'USDC');
  const hold = (minor: bigint) => ds.transaction((m) => applyPosting(m, 'payment', `hold:${randomUUID()}`, 'hold', Movements.hold(owner, usdc(minor)), undefined, { freshId: true }));

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_pay_medium');
    ds = await openServiceDataSource(paymentDataSourceOptions(db.url));
    await ds.transaction((m) => applyPosting(m, 'payment', `deposit:${randomUUID()}`, 'deposit', Movements.deposit(owner, usdc(100n))));
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  it('a hold the wallet covers is posted; one it does not cover throws and writes nothing', async () => {
    expect(await hold(60n)).toBe(true);
    const postings = async () => Number((await ds.query(`SELECT count(*)::int AS n FROM payment.posting WHERE kind = 'hold'`))[0].n);
    expect(await postings()).toBe(1);
    await expect(hold(60n)).rejects.toBeInstanceOf(InsufficientBalance);
    expect({ postings: await postings(), available: await available() }).toEqual({ postings: 1, available: 40n });
  });

  it('twenty concurrent holds of 10 on a wallet of 40 take exactly four', async () => {
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => hold(10n)));
    expect(results.filter((r) => r.status === 'fulfilled').length).toBe(4);
    expect(results.filter((r) => r.status === 'rejected' && r.reason instanceof InsufficientBalance).length).toBe(16);
    expect(await available()).toBe(0n);
    expect(await balanceOf(ds.manager, 'payment', accountKey({ kind: 'held', ownerId: owner }), 'USDC')).toBe(100n);
  });

  it('a posting applied twice moves money once; one whose guarded debit is short throws and its transaction leaves nothing', async () => {
    const other = `owner-${randomUUID()}`;
    const deposit = (id: string) => ds.transaction((m) => applyPosting(m, 'payment', id, 'deposit', Movements.deposit(other, usdc(30n))));
    expect([await deposit('deposit:twice'), await deposit('deposit:twice')]).toEqual([true, false]);
    const otherAvailable = () => balanceOf(ds.manager, 'payment', accountKey({ kind: 'available', ownerId: other }), 'USDC');
    expect(await otherAvailable()).toBe(30n);
    // Not a fresh id: the posting row is written first, the short debit throws, and the caller's rollback undoes it.
    const short = ds.transaction((m) => applyPosting(m, 'payment', 'hold:not-fresh', 'hold', Movements.hold(other, usdc(31n))));
    await expect(short).rejects.toBeInstanceOf(InsufficientBalance);
    expect(await ds.query(`SELECT count(*)::int AS n FROM payment.posting WHERE posting_id = 'hold:not-fresh'`)).toEqual([{ n: 0 }]);
    expect(await otherAvailable()).toBe(30n);
  });
});
