/**
 * Medium tier (real PostgreSQL with payment's migrations): the postings a batch of calls decided are booked in one
 * statement (`applyPostings`): every balance moves by the sum of the new postings' lines, a posting booked before moves
 * nothing, and a batch that would take an account that may not go negative below zero leaves nothing at all
 * (R-budgets: statements per call; money: balanced double entry, nothing twice).
 */
import { randomUUID } from 'node:crypto';
import { type DataSource } from 'typeorm';
import { accountKey, Movements } from '@tollgate/accounting';
import { initialState } from '@tollgate/call-life';
import { applyPosting, applyPostings, balanceOf, openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase } from '@tollgate/testing';
import { Holds } from '../src/lib/holds/holds.repository';
import { paymentDataSourceOptions } from '../src/lib/payment.datasource-options';

jest.setTimeout(60_000);

describe('a batch of postings in one statement (medium tier)', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;
  const owner = `owner-${randomUUID()}`;
  const usdc = (minor: bigint) => ({ minor, asset: 'USDC' });
  const balance = (kind: 'available' | 'held') => balanceOf(ds.manager, 'payment', accountKey({ kind, ownerId: owner }), 'USDC');
  const clearing = () => balanceOf(ds.manager, 'payment', accountKey({ kind: 'clearing' }), 'USDC');
  const count = async (sql: string, p: unknown[]) => Number((await ds.query(sql, p))[0].n);

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_pay_batch');
    ds = await openServiceDataSource(paymentDataSourceOptions(db.url));
    await ds.transaction((m) => applyPosting(m, 'payment', `deposit:${randomUUID()}`, 'deposit', Movements.deposit(owner, usdc(100n))));
    for (const id of ['a', 'b', 'c']) await ds.transaction((m) => applyPosting(m, 'payment', `hold:${owner}:${id}`, 'hold', Movements.hold(owner, usdc(20n))));
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  it('captures of three holds in one statement move each balance by their sum; booking them again moves nothing', async () => {
    const captures = ['a', 'b', 'c'].map((id) => ({ id: `capture:${owner}:${id}`, kind: 'capture', entries: Movements.capture(owner, usdc(20n), 15n) }));
    const before = await clearing();
    expect(await ds.transaction((m) => applyPostings(m, 'payment', captures))).toBe(3);
    // Each hold of 20: 15 to clearing, 5 back to available.
    expect({ held: await balance('held'), available: await balance('available'), clearing: (await clearing()) - before }).toEqual({ held: 0n, available: 55n, clearing: 45n });
    expect(await count(`SELECT count(*)::int AS n FROM payment.entry WHERE posting_id = ANY($1)`, [captures.map((c) => c.id)])).toBe(9);
    expect(await ds.transaction((m) => applyPostings(m, 'payment', [...captures, captures[0]!]))).toBe(0);
    expect({ held: await balance('held'), available: await balance('available') }).toEqual({ held: 0n, available: 55n });
  });

  it('a batch that would take a wallet below zero fails whole: no posting, no line, no balance moved', async () => {
    const fresh = `hold:${owner}:${randomUUID()}`;
    const tooMuch = [
      { id: fresh, kind: 'hold', entries: Movements.hold(owner, usdc(50n)) },
      { id: `hold:${owner}:${randomUUID()}`, kind: 'hold', entries: Movements.hold(owner, usdc(10n)) },
    ];
    await expect(ds.transaction((m) => applyPostings(m, 'payment', tooMuch))).rejects.toThrow(/balance_never_negative/);
    expect(await count(`SELECT count(*)::int AS n FROM payment.posting WHERE posting_id = $1`, [fresh])).toBe(0);
    expect({ held: await balance('held'), available: await balance('available') }).toEqual({ held: 0n, available: 55n });
  });

  it('batches and single postings on the same wallets side by side never wait on each other in a circle', async () => {
    const owners = Array.from({ length: 4 }, () => `owner-${randomUUID()}`);
    for (const o of owners) await ds.transaction((m) => applyPosting(m, 'payment', `deposit:${randomUUID()}`, 'deposit', Movements.deposit(o, usdc(1_000_000n))));
    // A batch holds and releases across every owner (each owner's available and held rows); a single hold locks its
    // wallet's available row first (as placing a hold does: its reads lock the wallet), dawdles, then posts.
    const batch = () => ds.transaction((m) => applyPostings(m, 'payment', owners.flatMap((o) => [
      { id: `hold:${randomUUID()}`, kind: 'hold', entries: Movements.hold(o, usdc(2n)) },
      { id: `void:${randomUUID()}`, kind: 'void', entries: Movements.void(o, usdc(1n)) },
    ])));
    const single = (o: string) => ds.transaction(async (m) => {
      await balanceOf(m, 'payment', accountKey({ kind: 'available', ownerId: o }), 'USDC', true);
      await m.query('SELECT pg_sleep(0.02)');
      await applyPosting(m, 'payment', `hold:${randomUUID()}`, 'hold', Movements.hold(o, usdc(1n)));
    });
    const results = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => (i % 3 === 0 ? batch() : single(owners[i % owners.length]!))));
    expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
  });

  it('holds placed for several wallets, posted in call order, beside batches of hold ends: no circle either', async () => {
    const owners = Array.from({ length: 4 }, () => `owner-${randomUUID()}`);
    for (const o of owners) await ds.transaction((m) => applyPosting(m, 'payment', `deposit:${randomUUID()}`, 'deposit', Movements.deposit(o, usdc(1_000_000n))));
    for (const o of owners) await ds.transaction((m) => applyPosting(m, 'payment', `hold:${randomUUID()}`, 'hold', Movements.hold(o, usdc(1_000n))));
    // Hold ends capture across every wallet (held → clearing); placing holds locks its wallets (as its reads do), then
    // posts one call after another — last owner first, the order calls come in, not the accounts'.
    const ends = () => ds.transaction((m) => applyPostings(m, 'payment', owners.map((o) => ({ id: `capture:${randomUUID()}`, kind: 'capture', entries: Movements.capture(o, usdc(2n), 2n) }))));
    const place = () => ds.transaction(async (m) => {
      await Holds.lockAgentsAndAvailable(m, [], owners.map((ownerId) => ({ ownerId, asset: 'USDC' })));
      for (const o of [...owners].reverse()) {
        await applyPosting(m, 'payment', `hold:${randomUUID()}`, 'hold', Movements.hold(o, usdc(1n)), undefined, { freshId: true });
        await m.query('SELECT pg_sleep(0.005)');
      }
    });
    const results = await Promise.allSettled(Array.from({ length: 24 }, (_, i) => (i % 2 === 0 ? ends() : place())));
    expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
  });

  it('hold ends lock their owners\' wallets in account order, as postings do: no circle with a batch of postings', async () => {
    // Owner "a…" sorts first among accounts, but its call sorts last among intents: locking the debt rows in the calls'
    // order would take b's before a's while a posting batch holds a's and wants b's.
    const [a, b] = [`a-${randomUUID()}`, `b-${randomUUID()}`];
    const tail = randomUUID().slice(-12);
    const [callOfB, callOfA] = [`00000000-0000-4000-8000-${tail}`, `ffffffff-ffff-4fff-bfff-${tail}`];
    const debt = (o: string) => accountKey({ kind: 'debt', ownerId: o });
    await ds.query(`INSERT INTO payment.balance (account, asset, balance) VALUES ($1, 'USDC', -7), ($2, 'USDC', 0)`, [debt(a), debt(b)]);
    for (const [intentId, ownerId] of [[callOfB, b], [callOfA, a]] as const) {
      await ds.transaction((m) => Holds.place(m, { holdId: randomUUID(), life: initialState(intentId), counters: [], charge: {
        intent_id: intentId, owner_id: ownerId, agent_id: `agent-${ownerId}`, tool_id: 't', arguments_hash: 'h', amount_minor: '1', asset: 'USDC', free: false, outcome: 'held',
      } }));
    }
    let postingHoldsA!: () => void;
    const aLocked = new Promise<void>((r) => (postingHoldsA = r));
    // The batch of postings locks a's row, then (once the hold ends wait) b's — account order.
    const postings = ds.transaction(async (m) => {
      await balanceOf(m, 'payment', debt(a), 'USDC', true);
      postingHoldsA();
      await m.query('SELECT pg_sleep(0.3)');
      await balanceOf(m, 'payment', debt(b), 'USDC', true);
    });
    await aLocked;
    const ends = ds.transaction((m) => Holds.lockEnds(m, [callOfB, callOfA]));
    const results = await Promise.allSettled([postings, ends]);
    expect(results.filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason))).toEqual([]);
    // Each hold comes back with its own owner's debt (a owes 7, b nothing), read under the lock.
    const ended = (results[1] as PromiseFulfilledResult<Awaited<ReturnType<typeof Holds.lockEnds>>>).value;
    expect({ a: ended.get(callOfA)?.owedMinor, b: ended.get(callOfB)?.owedMinor }).toEqual({ a: 7n, b: 0n });
  });

  it('an unbalanced posting is refused before anything is written', async () => {
    const lopsided = [{ id: `deposit:${randomUUID()}`, kind: 'deposit', entries: [{ account: accountKey({ kind: 'available', ownerId: owner }), asset: 'USDC', amount: 5n }] }, { id: 'x', kind: 'deposit', entries: Movements.deposit(owner, usdc(1n)) }];
    await expect(ds.transaction((m) => applyPostings(m, 'payment', lopsided))).rejects.toThrow(/does not balance/);
    expect(await balance('available')).toBe(55n);
  });
});
