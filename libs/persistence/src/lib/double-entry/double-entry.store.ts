import { type Entry, mayGoNegative } from '@tollgate/accounting';
import { type EntityManager, type QueryRunner } from 'typeorm';
import { returnedRows } from '../service-data-source';

/**
 * A service's share of the double-entry ledger in its own schema: `posting`
 * (named by what it books, so each happens once), its `entry` rows, and
 * `balance`, the running sum per account and asset, kept at or above zero for
 * every account that may not go negative by a CHECK as well as by the code.
 */
export async function createDoubleEntryTables(q: QueryRunner, schema: string, kinds: readonly string[]): Promise<void> {
  await q.query(`
    CREATE TABLE "${schema}".balance (
      account text NOT NULL,
      asset   text NOT NULL,
      balance bigint NOT NULL DEFAULT 0,
      PRIMARY KEY (account, asset),
      CONSTRAINT balance_never_negative CHECK (balance >= 0 OR account IN ('external', 'platform:clearing') OR account LIKE 'owner:%:debt')
    )`);
  await q.query(`
    CREATE TABLE "${schema}".posting (
      posting_id text PRIMARY KEY,
      kind       text NOT NULL CHECK (kind IN (${kinds.map((k) => `'${k}'`).join(', ')})),
      intent_id  uuid,
      created_at timestamptz NOT NULL DEFAULT now()
    )`);
  await q.query(`
    CREATE TABLE "${schema}".entry (
      posting_id text NOT NULL REFERENCES "${schema}".posting (posting_id),
      seq        int NOT NULL,
      account    text NOT NULL,
      asset      text NOT NULL,
      amount     bigint NOT NULL,
      PRIMARY KEY (posting_id, seq)
    )`);
}

export async function dropDoubleEntryTables(q: QueryRunner, schema: string): Promise<void> {
  for (const t of ['entry', 'posting', 'balance']) await q.query(`DROP TABLE "${schema}".${t}`);
}

/** A debit that would take an owner account below zero: nothing of the posting is applied. */
export class InsufficientBalance extends Error {
  constructor(readonly account: string, readonly asset: string) {
    super(`${account} cannot cover this ${asset} posting`);
  }
}

/**
 * Applies one balanced posting (built by `Movements` in libs/accounting) to
 * PostgreSQL inside the caller's transaction. The posting id makes it happen
 * once: a second apply of the same id changes nothing and returns false (as
 * does a posting that moves nothing).
 * Debits of accounts that may not go negative are guarded row by row (the row
 * lock serialises concurrent holds on one wallet: the database decides who
 * gets the last of a balance), and a CHECK constraint backs that up.
 */
export async function applyPosting(manager: EntityManager, schema: string, postingId: string, kind: string, allEntries: readonly Entry[], intentId?: string, options: { freshId?: boolean } = {}): Promise<boolean> {
  // Nothing moves (a free call's hold): no posting, and no lock on the wallet's rows.
  const entries = allEntries.filter((e) => e.amount !== 0n);
  if (entries.length === 0) return false;
  const sums = new Map<string, bigint>();
  for (const e of entries) sums.set(e.asset, (sums.get(e.asset) ?? 0n) + e.amount);
  for (const [asset, sum] of sums) if (sum !== 0n) throw new Error(`posting ${postingId} does not balance in ${asset}`);
  const ordered = [...entries].sort((a, b) => (a.amount < b.amount ? -1 : a.amount > b.amount ? 1 : a.account.localeCompare(b.account)));
  const guarded = ordered.filter((x) => x.amount < 0n && !mayGoNegative(x.account));
  // A posting id never used before (`freshId`) with one guarded debit: the debit goes first, so a short balance throws
  // before anything is written and the caller needs no savepoint to leave no trace.
  const debitFirst = options.freshId === true && guarded.length === 1;
  if (debitFirst) await guardedDebit(manager, schema, guarded[0]!);
  // One statement records the posting and its entries, or nothing when this posting id was applied before.
  const [recorded] = returnedRows<{ n: number }>(await manager.query(
    `WITH p AS (INSERT INTO "${schema}".posting (posting_id, kind, intent_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING posting_id),
          e AS (INSERT INTO "${schema}".entry (posting_id, seq, account, asset, amount)
                SELECT p.posting_id, x.seq, x.account, x.asset, x.amount FROM p, unnest($4::int[], $5::text[], $6::text[], $7::bigint[]) AS x(seq, account, asset, amount)
                RETURNING 1)
     SELECT count(*)::int AS n FROM p`,
    [postingId, kind, intentId ?? null, ordered.map((_, i) => i), ordered.map((e) => e.account), ordered.map((e) => e.asset), ordered.map((e) => e.amount.toString())],
  ));
  if (!recorded || recorded.n === 0) {
    if (debitFirst) throw new Error(`posting ${postingId} was applied before: freshId promised a new one`);
    return false;
  }
  // Guarded debits one by one: the row lock decides who gets the last of a balance.
  if (!debitFirst) for (const e of guarded) await guardedDebit(manager, schema, e);
  // Every other movement in one upsert, one row per account and asset (a statement may touch a row only once).
  const rest = new Map<string, { account: string; asset: string; amount: bigint }>();
  for (const e of ordered.filter((x) => !(x.amount < 0n && !mayGoNegative(x.account)))) {
    const k = `${e.account}\u0000${e.asset}`;
    rest.set(k, { account: e.account, asset: e.asset, amount: (rest.get(k)?.amount ?? 0n) + e.amount });
  }
  const rows = [...rest.values()].sort((a, b) => a.account.localeCompare(b.account) || a.asset.localeCompare(b.asset));
  if (rows.length > 0) {
    await manager.query(
      `INSERT INTO "${schema}".balance AS b (account, asset, balance) SELECT * FROM unnest($1::text[], $2::text[], $3::bigint[])
       ON CONFLICT (account, asset) DO UPDATE SET balance = b.balance + EXCLUDED.balance`,
      [rows.map((r) => r.account), rows.map((r) => r.asset), rows.map((r) => r.amount.toString())],
    );
  }
  return true;
}

async function guardedDebit(manager: EntityManager, schema: string, e: Entry): Promise<void> {
  const debited = returnedRows(await manager.query(
    `UPDATE "${schema}".balance SET balance = balance + $3 WHERE account = $1 AND asset = $2 AND balance + $3 >= 0 RETURNING balance`,
    [e.account, e.asset, e.amount.toString()],
  ));
  if (debited.length === 0) throw new InsufficientBalance(e.account, e.asset);
}

export async function balanceOf(manager: EntityManager, schema: string, account: string, asset: string, lock = false): Promise<bigint> {
  const [row]: { balance: string }[] = await manager.query(
    `SELECT balance FROM "${schema}".balance WHERE account = $1 AND asset = $2${lock ? ' FOR UPDATE' : ''}`,
    [account, asset],
  );
  return BigInt(row?.balance ?? '0');
}
