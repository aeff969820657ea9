/**
 * The account-by-account comparison of the reconciliation report, pure. Payment books the owner
 * side of every movement and settlement the provider side; the ledger's journal is both halves. So for each account
 * and asset the journal must equal payment's balance plus settlement's (a book that never touches an account counts
 * zero): the shared clearing and external accounts are the sum of the two halves.
 */
export interface BookBalance { account: string; asset: string; balance: string }

export interface AccountLine {
  account: string;
  asset: string;
  payment: string;
  settlement: string;
  journal: string;
  /** journal − (payment + settlement): zero when the books agree. */
  difference: string;
  status: 'matched' | 'mismatch';
}

export function compareBooks(payment: readonly BookBalance[], settlement: readonly BookBalance[], journal: readonly BookBalance[]): AccountLine[] {
  const lines = new Map<string, { account: string; asset: string; payment: bigint; settlement: bigint; journal: bigint }>();
  const add = (rows: readonly BookBalance[], book: 'payment' | 'settlement' | 'journal') => {
    for (const r of rows) {
      const id = `${r.account}\u0000${r.asset}`;
      const line = lines.get(id) ?? { account: r.account, asset: r.asset, payment: 0n, settlement: 0n, journal: 0n };
      line[book] += BigInt(r.balance);
      lines.set(id, line);
    }
  };
  add(payment, 'payment');
  add(settlement, 'settlement');
  add(journal, 'journal');
  return [...lines.values()]
    .filter((l) => l.payment !== 0n || l.settlement !== 0n || l.journal !== 0n)
    .sort((a, b) => (a.account === b.account ? cmp(a.asset, b.asset) : cmp(a.account, b.account)))
    .map((l) => {
      const difference = l.journal - (l.payment + l.settlement);
      return { account: l.account, asset: l.asset, payment: l.payment.toString(), settlement: l.settlement.toString(), journal: l.journal.toString(),
        difference: difference.toString(), status: difference === 0n ? 'matched' : 'mismatch' };
    });
}

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
