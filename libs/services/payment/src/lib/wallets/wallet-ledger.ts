import { type Entry, mayGoNegative } from '@tollgate/accounting';
import { returnedRows } from '@tollgate/persistence';
import { type EntityManager } from 'typeorm';

export type PostingKind = 'deposit' | 'hold' | 'capture' | 'void' | 'chargeback';

/** A debit that would take an owner account below zero: nothing of the posting is applied. */
export class InsufficientBalance extends Error {
  constructor(readonly account: string, readonly asset: string) {
    super(`${account} cannot cover this ${asset} posting`);
  }
}

/**
 * Applies one balanced posting (built by `Movements` in libs/accounting) to
 * PostgreSQL inside the caller's transaction. The posting id makes it happen
 * once: a second apply of the same id changes nothing and returns false.
 * Debits of accounts that may not go negative are guarded row by row (the row
 * lock serialises concurrent holds on one wallet: the database decides who
 * gets the last of a balance), and a CHECK constraint backs that up.
 */
export async function applyPosting(manager: EntityManager, postingId: string, kind: PostingKind, entries: readonly Entry[], intentId?: string): Promise<boolean> {
  const sums = new Map<string, bigint>();
  for (const e of entries) sums.set(e.asset, (sums.get(e.asset) ?? 0n) + e.amount);
  for (const [asset, sum] of sums) if (sum !== 0n) throw new Error(`posting ${postingId} does not balance in ${asset}`);
  const fresh = await manager.query('INSERT INTO payment.posting (posting_id, kind, intent_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING posting_id', [postingId, kind, intentId ?? null]);
  if (fresh.length === 0) return false;
  // Debits first, in a fixed order (no deadlock between two postings touching the same accounts).
  const ordered = [...entries].sort((a, b) => (a.amount < b.amount ? -1 : a.amount > b.amount ? 1 : a.account.localeCompare(b.account)));
  for (const [seq, e] of ordered.entries()) {
    if (e.amount < 0n && !mayGoNegative(e.account)) {
      const debited = returnedRows(await manager.query(
        'UPDATE payment.balance SET balance = balance + $3 WHERE account = $1 AND asset = $2 AND balance + $3 >= 0 RETURNING balance',
        [e.account, e.asset, e.amount.toString()],
      ));
      if (debited.length === 0) throw new InsufficientBalance(e.account, e.asset);
    } else {
      await manager.query(
        `INSERT INTO payment.balance (account, asset, balance) VALUES ($1, $2, $3)
         ON CONFLICT (account, asset) DO UPDATE SET balance = payment.balance.balance + EXCLUDED.balance`,
        [e.account, e.asset, e.amount.toString()],
      );
    }
    await manager.query('INSERT INTO payment.entry (posting_id, seq, account, asset, amount) VALUES ($1, $2, $3, $4, $5)', [postingId, seq, e.account, e.asset, e.amount.toString()]);
  }
  return true;
}

export async function balanceOf(manager: EntityManager, account: string, asset: string, lock = false): Promise<bigint> {
  const [row]: { balance: string }[] = await manager.query(
    `SELECT balance FROM payment.balance WHERE account = $1 AND asset = $2${lock ? ' FOR UPDATE' : ''}`,
    [account, asset],
  );
  return BigInt(row?.balance ?? '0');
}
