import fc from 'fast-check';
import { type BookBalance, compareBooks } from './compare-books';

const account = fc.constantFrom('owner:a:available', 'owner:a:held', 'owner:b:available', 'platform:clearing', 'provider:p:payable', 'platform:revenue', 'external');
const balance = fc.bigInt({ min: -(10n ** 15n), max: 10n ** 15n });
const book = fc.array(fc.record({ account, asset: fc.constantFrom('USD', 'USDC'), balance }), { maxLength: 12 })
  .map((rows) => {
    const unique = new Map(rows.map((r) => [`${r.account}/${r.asset}`, r]));
    return [...unique.values()].map((r) => ({ ...r, balance: r.balance.toString() }));
  });
const sum = (rows: readonly BookBalance[], account: string, asset: string) => rows.filter((r) => r.account === account && r.asset === asset).reduce((s, r) => s + BigInt(r.balance), 0n);

describe('compareBooks (reconciliation)', () => {
  it('matches every account when the journal is the sum of the two books', () => {
    fc.assert(fc.property(book, book, (payment, settlement) => {
      const journal = compareBooks(payment, settlement, []).map((l) => ({ account: l.account, asset: l.asset, balance: (BigInt(l.payment) + BigInt(l.settlement)).toString() }));
      const lines = compareBooks(payment, settlement, journal);
      return lines.every((l) => l.status === 'matched' && l.difference === '0');
    }));
  });

  it('reports the exact difference of each account, and every account any book holds', () => {
    fc.assert(fc.property(book, book, book, (payment, settlement, journal) => {
      for (const l of compareBooks(payment, settlement, journal)) {
        const expected = sum(journal, l.account, l.asset) - sum(payment, l.account, l.asset) - sum(settlement, l.account, l.asset);
        if (BigInt(l.difference) !== expected || (l.status === 'matched') !== (expected === 0n)) return false;
      }
      const listed = new Set(compareBooks(payment, settlement, journal).map((l) => `${l.account}/${l.asset}`));
      return [...payment, ...settlement, ...journal].filter((r) => r.balance !== '0').every((r) => listed.has(`${r.account}/${r.asset}`));
    }));
  });

  it('a payment posting the journal never received is a mismatch on both of its accounts', () => {
    const payment = [{ account: 'owner:a:available', asset: 'USD', balance: '900' }, { account: 'owner:a:held', asset: 'USD', balance: '100' }, { account: 'external', asset: 'USD', balance: '-1000' }];
    const journal = [{ account: 'owner:a:available', asset: 'USD', balance: '1000' }, { account: 'external', asset: 'USD', balance: '-1000' }];
    const lines = compareBooks(payment, [], journal);
    expect(lines.filter((l) => l.status === 'mismatch')).toEqual([
      { account: 'owner:a:available', asset: 'USD', payment: '900', settlement: '0', journal: '1000', difference: '100', status: 'mismatch' },
      { account: 'owner:a:held', asset: 'USD', payment: '100', settlement: '0', journal: '0', difference: '-100', status: 'mismatch' },
    ]);
  });
});
