import { type Entry, mayGoNegative } from '@tollgate/accounting';
import { type EntityManager, type QueryRunner } from 'typeorm';
import { col, defineTable, select } from '../table';

/** What the posting statement returns: whether the posting was recorded, and how many guarded debits went through. */
const POSTED = defineTable('(posting result)', { recorded: col.integer().required(), debited: col.integer().required() });
/** `<service>.balance`: each account's running balance per asset. */
export const LEDGER_BALANCE = defineTable('(service).balance', { account: col.text().required(), asset: col.text().required(), balance: col.bigint().required() });
/** `<service>.posting`: one row per booked posting, named by what it books (so each happens once). */
export const LEDGER_POSTING = defineTable('(service).posting', { posting_id: col.text().required(), kind: col.text().required(), intent_id: col.uuid().nullable(), created_at: col.timestamptz().required() });
/** `<service>.entry`: a posting's lines, one account and asset each. */
export const LEDGER_ENTRY = defineTable('(service).entry', {
  posting_id: col.text().required(), seq: col.integer().required(), account: col.text().required(), asset: col.text().required(), amount: col.bigint().required(),
});

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
 * PostgreSQL inside the caller's transaction, in one statement: the posting,
 * its entries, the guarded debits and every other balance movement. The
 * posting id makes it happen once: a second apply of the same id changes
 * nothing and returns false (as does a posting that moves nothing).
 * Debits of accounts that may not go negative are guarded (`balance + amount
 * >= 0` under the row lock, so concurrent holds on one wallet are serialised
 * and the database decides who gets the last of a balance), and a CHECK
 * constraint backs that up. A short balance throws `InsufficientBalance`.
 * With `freshId` (a posting id never used before) and one guarded debit, the
 * posting is written only if that debit succeeded, so a short balance leaves no
 * trace and the caller needs no savepoint; otherwise the caller rolls back.
 */
export async function applyPosting(manager: EntityManager, schema: string, postingId: string, kind: string, allEntries: readonly Entry[], intentId?: string, options: { freshId?: boolean } = {}): Promise<boolean> {
  // Nothing moves (a free call's hold): no posting, and no lock on the wallet's rows.
  const entries = allEntries.filter((e) => e.amount !== 0n);
  if (entries.length === 0) return false;
  assertBalanced(postingId, entries);
  const ordered = inLineOrder(entries);
  // A statement may touch a row only once: one net movement per account and asset, guarded debits apart from the rest.
  const moves = sumPerAccount(ordered).filter((m) => m.amount !== 0n);
  const isGuarded = (m: { account: string; amount: bigint }) => m.amount < 0n && !mayGoNegative(m.account);
  const guarded = moves.filter(isGuarded);
  const rest = moves.filter((m) => !isGuarded(m));
  const gated = options.freshId === true && guarded.length === 1;
  const [r] = await select(manager, POSTED, ['recorded', 'debited'], postingStatement(schema, gated), [
    postingId, kind, intentId ?? null,
    ordered.map((_, i) => i), ordered.map((e) => e.account), ordered.map((e) => e.asset), ordered.map((e) => e.amount.toString()),
    ...columns(guarded), ...columns(rest),
  ]);
  if (gated && r!.recorded === 0) throw new InsufficientBalance(guarded[0]!.account, guarded[0]!.asset);
  if (r!.recorded === 0) return false;
  if (r!.debited < guarded.length) throw new InsufficientBalance(guarded[0]!.account, guarded[0]!.asset);
  return true;
}

/** One posting of a batch (see `applyPostings`). */
export interface PostingToBook { id: string; kind: string; entries: readonly Entry[]; intentId?: string }

/**
 * Several balanced postings in one statement (a batch of calls settled together): the postings not booked before,
 * their entries, and every balance moved by the sum of their entries per account and asset. An existing row is locked
 * in account order, as `applyPosting` takes its rows, so batches and single postings never wait on each other in a
 * circle; then updated, not upserted (an upsert's CHECK sees the bare sum, not the new balance). A posting applied
 * before moves nothing. No debit is guarded here but by the balance's CHECK: a batch that would take an account that
 * may not go negative below zero fails as a whole (its caller retries it call by call, where `applyPosting` names the
 * account). Returns how many postings were recorded.
 */
export async function applyPostings(manager: EntityManager, schema: string, postings: readonly PostingToBook[]): Promise<number> {
  const unique = [...new Map(postings.map((p) => [p.id, p])).values()];
  const lines = unique.flatMap((p) => {
    const entries = p.entries.filter((e) => e.amount !== 0n);
    if (entries.length > 0) assertBalanced(p.id, entries);
    return inLineOrder(entries).map((e, seq) => ({ postingId: p.id, seq, ...e }));
  });
  const booked = unique.filter((p) => lines.some((l) => l.postingId === p.id));
  if (booked.length === 0) return 0;
  const [r] = await select(manager, POSTED, ['recorded'], `
    WITH p AS (INSERT INTO "${schema}".posting (posting_id, kind, intent_id) SELECT * FROM unnest($1::text[], $2::text[], $3::uuid[])
               ON CONFLICT DO NOTHING RETURNING posting_id),
    e AS (INSERT INTO "${schema}".entry (posting_id, seq, account, asset, amount)
          SELECT x.posting_id, x.seq, x.account, x.asset, x.amount FROM unnest($4::text[], $5::int[], $6::text[], $7::text[], $8::bigint[])
            AS x(posting_id, seq, account, asset, amount) JOIN p USING (posting_id)
          RETURNING account, asset, amount),
    s AS (SELECT account, asset, sum(amount) AS amount FROM e GROUP BY account, asset),
    l AS (SELECT b.account, b.asset FROM "${schema}".balance b JOIN s USING (account, asset) ORDER BY b.account, b.asset FOR UPDATE OF b),
    u AS (UPDATE "${schema}".balance b SET balance = b.balance + s.amount FROM l JOIN s USING (account, asset)
           WHERE b.account = l.account AND b.asset = l.asset RETURNING b.account, b.asset),
    i AS (INSERT INTO "${schema}".balance AS b (account, asset, balance)
          SELECT s.account, s.asset, s.amount FROM s WHERE NOT EXISTS (SELECT 1 FROM u WHERE u.account = s.account AND u.asset = s.asset)
          ON CONFLICT (account, asset) DO UPDATE SET balance = b.balance + EXCLUDED.balance RETURNING 1)
    SELECT (SELECT count(*) FROM p)::int AS recorded`, [
    booked.map((p) => p.id), booked.map((p) => p.kind), booked.map((p) => p.intentId ?? null),
    lines.map((l) => l.postingId), lines.map((l) => l.seq), lines.map((l) => l.account), lines.map((l) => l.asset), lines.map((l) => l.amount.toString()),
  ]);
  return r!.recorded;
}

/** A posting's lines in the order they are numbered: debits first, then by account. */
function inLineOrder(entries: readonly Entry[]): Entry[] {
  return [...entries].sort((a, b) => (a.amount < b.amount ? -1 : a.amount > b.amount ? 1 : a.account.localeCompare(b.account)));
}

function assertBalanced(postingId: string, entries: readonly Entry[]): void {
  const sums = new Map<string, bigint>();
  for (const e of entries) sums.set(e.asset, (sums.get(e.asset) ?? 0n) + e.amount);
  for (const [asset, sum] of sums) if (sum !== 0n) throw new Error(`posting ${postingId} does not balance in ${asset}`);
}

/** Movements summed per account and asset, in a stable order (account, then asset) so row locks are taken alike. */
function sumPerAccount(entries: readonly Entry[]): { account: string; asset: string; amount: bigint }[] {
  const sums = new Map<string, { account: string; asset: string; amount: bigint }>();
  for (const e of entries) {
    const k = `${e.account}\u0000${e.asset}`;
    sums.set(k, { account: e.account, asset: e.asset, amount: (sums.get(k)?.amount ?? 0n) + e.amount });
  }
  return [...sums.values()].sort((a, b) => a.account.localeCompare(b.account) || a.asset.localeCompare(b.asset));
}

function columns(rows: readonly { account: string; asset: string; amount: bigint }[]): [string[], string[], string[]] {
  return [rows.map((r) => r.account), rows.map((r) => r.asset), rows.map((r) => r.amount.toString())];
}

/**
 * The posting as one statement. Gated: the posting row exists only if the one guarded debit (`d`) succeeded, and
 * everything else hangs off the posting row. Otherwise the posting row comes first and the debits follow from it, so
 * a posting applied before moves nothing; the caller compares `debited` with the guarded movements it asked for.
 */
function postingStatement(schema: string, gated: boolean): string {
  const debit = `UPDATE "${schema}".balance b SET balance = b.balance + x.amount
                   FROM ${gated ? '' : 'p, '}unnest($8::text[], $9::text[], $10::bigint[]) AS x(account, asset, amount)
                  WHERE b.account = x.account AND b.asset = x.asset AND b.balance + x.amount >= 0 RETURNING 1`;
  const posting = gated
    ? `INSERT INTO "${schema}".posting (posting_id, kind, intent_id) SELECT $1, $2, $3 FROM d RETURNING posting_id`
    : `INSERT INTO "${schema}".posting (posting_id, kind, intent_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING RETURNING posting_id`;
  return `WITH ${gated ? `d AS (${debit}), p AS (${posting})` : `p AS (${posting}), d AS (${debit})`},
    e AS (INSERT INTO "${schema}".entry (posting_id, seq, account, asset, amount)
          SELECT p.posting_id, x.seq, x.account, x.asset, x.amount FROM p, unnest($4::int[], $5::text[], $6::text[], $7::bigint[]) AS x(seq, account, asset, amount)
          RETURNING 1),
    u AS (INSERT INTO "${schema}".balance AS b (account, asset, balance)
          SELECT x.account, x.asset, x.amount FROM p, unnest($11::text[], $12::text[], $13::bigint[]) AS x(account, asset, amount)
          ON CONFLICT (account, asset) DO UPDATE SET balance = b.balance + EXCLUDED.balance RETURNING 1)
    SELECT (SELECT count(*) FROM p)::int AS recorded, (SELECT count(*) FROM d)::int AS debited`;
}

export async function balanceOf(manager: EntityManager, schema: string, account: string, asset: string, lock = false): Promise<bigint> {
  const [row] = await select(manager, LEDGER_BALANCE, ['balance'],
    `SELECT balance FROM "${schema}".balance WHERE account = $1 AND asset = $2${lock ? ' FOR UPDATE' : ''}`, [account, asset]);
  return BigInt(row?.balance ?? '0');
}
