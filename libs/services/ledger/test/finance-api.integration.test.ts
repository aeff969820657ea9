/**
 * On the real PostgreSQL with the ledger's migrations: balances as of any time from the daily
 * roll-up equal the plain sum over the journal; cursor pages walk every entry once in the stable order; statements
 * open, move and close consistently.
 */
import { randomUUID } from 'node:crypto';
import { type DataSource } from 'typeorm';
import { openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase } from '@tollgate/testing';
import { ledgerDataSourceOptions } from '../src/lib/ledger.datasource-options';
import { type JournalLine, type JournalPosition } from '../src/lib/query-journal/journal-query';
import { type AccountScope, Journal } from '../src/lib/query-journal/journal.repository';
import { StatementUseCase } from '../src/lib/query-journal/statement.usecase';

jest.setTimeout(120_000);

const ACCOUNTS = ['owner:o1:available', 'owner:o1:held', 'owner:o2:available', 'provider:p1:payable', 'platform:revenue', 'external'];
const T0 = Date.parse('2026-11-01T00:00:00Z');
const DAY = 86_400_000;

/** A deterministic pseudo-random sequence (the test is reproducible). */
function rng(seed: number): () => number {
  let s = seed;
  return () => ((s = (s * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

describe('finance journal queries', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_finance_api');
    ds = await openServiceDataSource(ledgerDataSourceOptions(db.url));
    const r = rng(42);
    // 3,000 entries over 20 days, in batches (as the consumer inserts them), many sharing an effective time.
    for (let b = 0; b < 30; b++) {
      const rows = Array.from({ length: 100 }, (_, i) => ({
        posting: `p${b}-${Math.floor(i / 2)}`, seq: i % 2, account: ACCOUNTS[Math.floor(r() * ACCOUNTS.length)]!, asset: r() < 0.8 ? 'USDC' : 'EUR',
        amount: Math.floor(r() * 2000) - 1000, at: new Date(T0 + Math.floor(r() * 20 * 24) * 3_600_000),
      }));
      await ds.query(
        `INSERT INTO ledger.journal_entry (posting_id, seq, kind, intent_id, account, asset, amount, occurred_at, event_id)
         SELECT x.p, x.s, 'deposit', NULL, x.a, x.c, x.m, x.t, $7 FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::bigint[], $6::timestamptz[]) AS x(p, s, a, c, m, t)`,
        [rows.map((x) => x.posting), rows.map((x) => x.seq), rows.map((x) => x.account), rows.map((x) => x.asset), rows.map((x) => x.amount), rows.map((x) => x.at), randomUUID()]);
    }
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  const naive = async (scope: AccountScope, t: Date, inclusive: boolean) => {
    const prefix = 'all' in scope ? '' : 'ownerId' in scope ? `owner:${scope.ownerId}:` : `provider:${scope.providerId}:`;
    return ds.query(`SELECT account, asset, sum(amount)::text AS balance FROM ledger.journal_entry WHERE starts_with(account, $1) AND occurred_at ${inclusive ? '<=' : '<'} $2
      GROUP BY account, asset ORDER BY account, asset`, [prefix, t]);
  };

  it('balances as of any time (day boundaries, exact entry times, between) equal the plain sum over the journal', async () => {
    const r = rng(7);
    const times = [new Date(T0), new Date(T0 + DAY), new Date(T0 + 5 * DAY - 1), new Date(T0 + 30 * DAY), ...Array.from({ length: 60 }, () => new Date(T0 + Math.floor(r() * 22 * DAY)))];
    for (const t of times) {
      for (const scope of [{ all: true }, { ownerId: 'o1' }, { providerId: 'p1' }] as AccountScope[]) {
        expect(await Journal.balancesAsOf(ds, scope, t)).toEqual(await naive(scope, t, true));
        expect(await Journal.balancesBefore(ds, scope, t)).toEqual(await naive(scope, t, false));
      }
    }
  });

  it('cursor pages walk every matching entry exactly once, in the stable order, for any page size', async () => {
    const expected: { posting_id: string; seq: number }[] = await ds.query(
      `SELECT posting_id, seq FROM ledger.journal_entry WHERE owner_id = 'o1' AND asset = 'USDC' ORDER BY occurred_at, posting_id, seq`);
    for (const size of [1, 7, 100, 500]) {
      const seen: JournalLine[] = [];
      let after: JournalPosition | undefined;
      for (;;) {
        const page = await Journal.page(ds, { ownerId: 'o1', asset: 'USDC' }, after, size);
        seen.push(...page);
        if (page.length < size) break;
        after = page[page.length - 1]!;
      }
      expect(seen.map((l) => ({ posting_id: l.postingId, seq: l.seq }))).toEqual(expected);
    }
    const streamed: JournalLine[] = [];
    for await (const l of Journal.all(ds, { ownerId: 'o1', asset: 'USDC' }, 13)) streamed.push(l);
    expect(streamed.length).toBe(expected.length);
  });

  it('a statement opens with the balances before `from`, closes with those before `to`, and its lines are the difference', async () => {
    const statements = new StatementUseCase(ds);
    const from = new Date(T0 + 3 * DAY + 5 * 3_600_000);
    const to = new Date(T0 + 9 * DAY);
    const s = await statements.json({ ownerId: 'o1' }, from, to);
    expect(s.accounts.length).toBeGreaterThan(0);
    for (const a of s.accounts) {
      const lines = s.lines.filter((l) => l.account === a.account && l.asset === a.asset);
      expect(lines.reduce((sum, l) => sum + BigInt(l.amountMinor), 0n).toString()).toBe(a.movements);
      expect((BigInt(a.opening) + BigInt(a.movements)).toString()).toBe(a.closing);
    }
    expect(s.lines.every((l) => Date.parse(l.occurredAt) >= from.getTime() && Date.parse(l.occurredAt) < to.getTime() && l.account.startsWith('owner:o1:'))).toBe(true);
    const csv: string[] = [];
    for await (const line of statements.csv({ ownerId: 'o1' }, from, to)) csv.push(line);
    expect(csv.filter((l) => l.startsWith('line,')).length).toBe(s.lines.length);
    expect(csv.filter((l) => l.startsWith('opening,')).length).toBe(s.accounts.length);
  });
});
