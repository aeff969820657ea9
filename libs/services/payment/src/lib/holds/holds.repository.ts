import { type EntityManager } from 'typeorm';
import { accountKey, type CounterKind } from '@tollgate/accounting';
import { type CallState, isTerminal } from '@tollgate/call-life';
import { col, defineTable, type RowOf, select } from '@tollgate/persistence';
import { type X402AttemptLife } from '../attempts/x402-attempt.model';
import { accountAround, AGENT_LOCK_PREFIX } from '../payment.sql';

/**
 * `payment.hold`: the money set aside for one call. Its life is the call's state as payment knows it (held, then
 * settled or refunded): the hold is open until the model says the call `isTerminal` — captured when it was settled,
 * voided when it was refunded. `open` is derived from that on save, for the count of open holds (a partial index).
 */
export const HOLD = defineTable('payment.hold', {
  hold_id: col.uuid().required(),
  intent_id: col.uuid().required(),
  owner_id: col.text().required(),
  amount_minor: col.bigint().required(),
  asset: col.text().required(),
  life: col.jsonb<CallState>().required(),
  open: col.boolean().required(),
  captured_minor: col.bigint().nullable(),
  created_at: col.timestamptz().required(),
  resolved_at: col.timestamptz().nullable(),
});
export type HoldRow = RowOf<typeof HOLD>;

/** Whether an owner has a wallet in an asset, and what is available in it. */
const WALLET = defineTable('(wallet)', { has_wallet: col.boolean().required(), available: col.bigint().required() });

/** A wallet's available balance (`payment.balance`, the owner's available account). */
const AVAILABLE = defineTable('(available)', { account: col.text().required(), asset: col.text().required(), balance: col.bigint().required() });

/** A call payment decided, with its hold's state when it holds one. */
const DECIDED = defineTable('(decided)', { intent_id: col.uuid().required(), life: col.jsonb<CallState>().nullable(), charged: col.boolean().required(), paying: col.boolean().required() });

/** A hold locked for its end, with what its owner owed then (the debt row locked too: the posting that follows repays it). */
const LOCKED_HOLD = defineTable('(locked hold)', {
  ...HOLD.columns, debt: col.bigint().nullable(), agent_id: col.text().required(), attempt: col.jsonb<X402AttemptLife>().nullable(), available: col.bigint().nullable(),
});

/** `payment.charge`: payment's decision on one CallRequested, written once (held or rejected, with the refusal's code). */
export const CHARGE = defineTable('payment.charge', {
  intent_id: col.uuid().required(),
  owner_id: col.text().required(),
  agent_id: col.text().required(),
  tool_id: col.text().required(),
  arguments_hash: col.text().required(),
  amount_minor: col.bigint().required(),
  asset: col.text().required(),
  free: col.boolean().required(),
  outcome: col.text<'held' | 'rejected'>().required(),
  code: col.text().nullable(),
  created_at: col.timestamptz().required(),
});
export type ChargeRow = RowOf<typeof CHARGE>;

/** `payment.spend_counter`: an agent's calls and spend in one bucket (a day, a week, a month, a minute, a tool's free calls of a day). */
export const SPEND_COUNTER = defineTable('payment.spend_counter', {
  agent_id: col.text().required(),
  kind: col.text<CounterKind>().required(),
  bucket: col.timestamptz().required(),
  key: col.text().required(),
  calls: col.integer().required(),
  amount: col.bigint().required(),
});
export type SpendCounterRow = RowOf<typeof SPEND_COUNTER>;

export type NewCharge = Omit<ChargeRow, 'created_at' | 'code'> & { code?: string };

/** The counters a hold adds to, one per bucket. */
export type CounterIncrement = Pick<SpendCounterRow, 'kind' | 'bucket' | 'key'> & { amount: bigint };

/** A hold at its end, with what its owner owed when it ended (the debt row locked for the posting that follows). */
export interface EndingHold {
  holdId: string; intentId: string; ownerId: string; agentId: string; amount: bigint; asset: string; life: CallState; owedMinor: bigint; createdAt: Date;
  /** The outside payment that funded the hold (an authorization ends with it), locked with the owner's available balance. */
  paidBy?: { life: X402AttemptLife; available: bigint };
}

const [DEBT_PREFIX, DEBT_SUFFIX] = accountAround('debt');
const [AVAILABLE_PREFIX, AVAILABLE_SUFFIX] = accountAround('available');

/** A wallet's key in maps of a batch: its owner and asset. */
export function walletKey(ownerId: string, asset: string): string {
  return `${ownerId}\u0000${asset}`;
}

/** Every statement on `payment.hold`, `payment.charge` and `payment.spend_counter`. */
export const Holds = {
  /**
   * The agents' locks, then what is available in each of these wallets with the rows locked until commit — one
   * statement. The agents' locks (`pg_advisory_xact_lock`, in the order given: callers sort, so two batches never wait
   * on each other in a circle) are a one-time filter evaluated before the first wallet row is read, so they are held
   * whether or not a wallet has a row: concurrent calls of one agent are decided one after another, each seeing what
   * the one before it counted (the reads they protect are later statements, whose snapshots see the previous holder's
   * commit). The wallets' rows — available and held, the two a hold's posting moves — are all locked here, in account
   * order, the order every posting takes them: the holds posted later in this batch, one call after another, never
   * take a row a batch of hold ends holds while it waits for one of theirs. `FOR UPDATE` reads the latest committed
   * balance, so a decision made on these figures is exactly what the guarded debit will find. A wallet with no row has
   * nothing.
   */
  async lockAgentsAndAvailable(m: EntityManager, agentIds: readonly string[], wallets: readonly { ownerId: string; asset: string }[]): Promise<Map<string, bigint>> {
    const keyed = wallets.map((w) => ({ ...w, account: accountKey({ kind: 'available', ownerId: w.ownerId }) }));
    const locked = keyed.flatMap((w) => [w, { ...w, account: accountKey({ kind: 'held', ownerId: w.ownerId }) }])
      .sort((a, b) => (a.account + a.asset).localeCompare(b.account + b.asset));
    const rows = await select(m, AVAILABLE, ['account', 'asset', 'balance'],
      `WITH agents AS MATERIALIZED (SELECT count(pg_advisory_xact_lock(hashtext(k))) AS n FROM unnest($3::text[]) AS a(k))
       SELECT b.account, b.asset, b.balance FROM payment.balance b JOIN unnest($1::text[], $2::text[]) AS w(account, asset) ON b.account = w.account AND b.asset = w.asset
        WHERE (SELECT n FROM agents) >= 0 ORDER BY b.account, b.asset FOR UPDATE OF b`,
      [locked.map((w) => w.account), locked.map((w) => w.asset), agentIds.map((a) => `${AGENT_LOCK_PREFIX}${a}`)]);
    const found = new Map(rows.map((r) => [`${r.account}\u0000${r.asset}`, BigInt(r.balance)]));
    return new Map(keyed.map((w) => [walletKey(w.ownerId, w.asset), found.get(`${w.account}\u0000${w.asset}`) ?? 0n]));
  },

  /** The calls among these that payment decided already (a charge, an outside payment's attempt, or both), with the hold's state when held. */
  async decided(m: EntityManager, intentIds: readonly string[]): Promise<Map<string, { life: CallState | null; paying: boolean }>> {
    const rows = await select(m, DECIDED, ['intent_id', 'life', 'charged', 'paying'],
      `SELECT i.id AS intent_id, h.life, EXISTS (SELECT 1 FROM payment.charge c WHERE c.intent_id = i.id) AS charged,
              EXISTS (SELECT 1 FROM payment.x402_attempt a WHERE a.intent_id = i.id) AS paying
         FROM unnest($1::uuid[]) AS i(id) LEFT JOIN payment.hold h ON h.intent_id = i.id`,
      [[...intentIds]]);
    return new Map(rows.filter((r) => r.charged || r.paying).map((r) => [r.intent_id, { life: r.life, paying: r.paying }]));
  },

  /** Whether the owner ever had a prepaid wallet in this asset (an admin deposit: money an outside rail credited for one call is not one), and what is available in it now. */
  async walletOf(m: EntityManager, ownerId: string, asset: string): Promise<{ hasWallet: boolean; available: bigint }> {
    const [r] = await select(m, WALLET, ['has_wallet', 'available'],
      `SELECT EXISTS (SELECT 1 FROM payment.deposit WHERE owner_id = $1 AND asset = $2 AND source = 'admin') AS has_wallet,
              COALESCE((SELECT balance FROM payment.balance WHERE account = $3 AND asset = $2), 0) AS available`,
      [ownerId, asset, accountKey({ kind: 'available', ownerId })],
    );
    return { hasWallet: r!.has_wallet, available: BigInt(r!.available) };
  },

  /**
   * The hold placed, in one statement: the hold row, the charge row (once per intent) and — only when that charge is
   * new — the agent's counters, plus the owner's approval used up when this call needed one.
   */
  async place(m: EntityManager, h: { holdId: string; life: CallState; charge: NewCharge; counters: readonly CounterIncrement[]; approvalUsed?: { operationKey: string | null } }): Promise<void> {
    const c = h.charge;
    await m.query(
      `WITH c AS (
         INSERT INTO payment.charge (intent_id, owner_id, agent_id, tool_id, arguments_hash, amount_minor, asset, free, outcome)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, 'held') ON CONFLICT DO NOTHING RETURNING intent_id),
       h AS (INSERT INTO payment.hold (hold_id, intent_id, owner_id, amount_minor, asset, life, open) VALUES ($9, $1, $2, $6, $7, $16, true) RETURNING 1),
       a AS (UPDATE payment.approval SET status = 'used', used_by_intent = $1
              WHERE $10 AND agent_id = $3 AND tool_id = $4 AND arguments_hash = $5 AND COALESCE(operation_key, '') = COALESCE($11, '') AND status = 'approved'
              RETURNING 1)
       INSERT INTO payment.spend_counter AS s (agent_id, kind, bucket, key, calls, amount)
       SELECT $3, x.kind, x.bucket, x.key, 1, x.amount FROM c, unnest($12::text[], $13::timestamptz[], $14::text[], $15::bigint[]) AS x(kind, bucket, key, amount)
       ON CONFLICT (agent_id, kind, bucket, key) DO UPDATE SET calls = s.calls + 1, amount = s.amount + EXCLUDED.amount`,
      [c.intent_id, c.owner_id, c.agent_id, c.tool_id, c.arguments_hash, c.amount_minor, c.asset, c.free, h.holdId, h.approvalUsed !== undefined, h.approvalUsed?.operationKey ?? null,
        h.counters.map((x) => x.kind), h.counters.map((x) => x.bucket), h.counters.map((x) => x.key), h.counters.map((x) => x.amount.toString()), JSON.stringify(h.life)],
    );
  },

  /** A refusal recorded once per intent (a redelivered CallRequested finds it and changes nothing). */
  async recordRefusal(m: EntityManager, c: Omit<NewCharge, 'free' | 'amount_minor'> & { code: string }): Promise<void> {
    await m.query(
      `INSERT INTO payment.charge (intent_id, owner_id, agent_id, tool_id, arguments_hash, amount_minor, asset, free, outcome, code)
       VALUES ($1, $2, $3, $4, $5, 0, $6, false, 'rejected', $7) ON CONFLICT DO NOTHING`,
      [c.intent_id, c.owner_id, c.agent_id, c.tool_id, c.arguments_hash, c.asset, c.code],
    );
  },

  /**
   * The holds of these calls, each with its owner's debt, locked for their ends in the calls' order (a call payment
   * never held has no row). The debt row is locked too: the posting that follows may repay it; so are the outside
   * payment that funded it and, then, the available row (an authorization's unused rest is charged back from it). The
   * wallets' rows are locked after the holds, in account order — the order every posting takes them, so hold ends and
   * postings never wait on each other in a circle.
   */
  async lockEnds(m: EntityManager, intentIds: readonly string[]): Promise<Map<string, EndingHold>> {
    const rows = await select(m, LOCKED_HOLD, ['hold_id', 'intent_id', 'owner_id', 'amount_minor', 'asset', 'life', 'debt', 'created_at', 'agent_id', 'attempt', 'available'],
      `WITH h AS MATERIALIZED (
         SELECT h.hold_id, h.intent_id, h.owner_id, h.amount_minor, h.asset, h.life, h.created_at,
                (SELECT c.agent_id FROM payment.charge c WHERE c.intent_id = h.intent_id) AS agent_id,
                (SELECT a.life FROM payment.x402_attempt a WHERE a.intent_id = h.intent_id FOR UPDATE) AS attempt
           FROM payment.hold h WHERE h.intent_id = ANY($1::uuid[]) ORDER BY h.intent_id FOR UPDATE OF h),
       w AS MATERIALIZED (
         SELECT b.account, b.asset, b.balance FROM payment.balance b
          WHERE (b.account, b.asset) IN (SELECT $2 || owner_id || $3, asset FROM h UNION ALL SELECT $4 || owner_id || $5, asset FROM h WHERE attempt IS NOT NULL)
          ORDER BY b.account, b.asset FOR UPDATE)
       SELECT h.*, (SELECT w.balance FROM w WHERE w.account = $2 || h.owner_id || $3 AND w.asset = h.asset) AS debt,
              CASE WHEN h.attempt IS NOT NULL THEN (SELECT w.balance FROM w WHERE w.account = $4 || h.owner_id || $5 AND w.asset = h.asset) END AS available
         FROM h`,
      [[...intentIds], DEBT_PREFIX, DEBT_SUFFIX, AVAILABLE_PREFIX, AVAILABLE_SUFFIX]);
    return new Map(rows.map((row) => {
      const debt = BigInt(row.debt ?? '0');
      return [row.intent_id, {
        holdId: row.hold_id, intentId: row.intent_id, ownerId: row.owner_id, amount: BigInt(row.amount_minor), asset: row.asset, life: row.life,
        owedMinor: debt < 0n ? -debt : 0n, createdAt: row.created_at, agentId: row.agent_id,
        ...(row.attempt ? { paidBy: { life: row.attempt, available: BigInt(row.available ?? '0') } } : {}),
      }];
    }));
  },

  /**
   * A metered call ended below its hold: the agent's spend counters of the hold's buckets drop by the rest, so the
   * limits count the hold while the call is open and the charge once it ended.
   */
  async uncount(m: EntityManager, agentId: string, counters: readonly CounterIncrement[]): Promise<void> {
    await m.query(
      `UPDATE payment.spend_counter s SET amount = s.amount - x.amount
         FROM unnest($2::text[], $3::timestamptz[], $4::text[], $5::bigint[]) AS x(kind, bucket, key, amount)
        WHERE s.agent_id = $1 AND s.kind = x.kind AND s.bucket = x.bucket AND s.key = x.key`,
      [agentId, counters.map((x) => x.kind), counters.map((x) => x.bucket), counters.map((x) => x.key), counters.map((x) => x.amount.toString())]);
  },

  /** The holds' states after their end, each with the amount captured (null when voided), in one statement; `open` is the model's answer. */
  async saveEnds(m: EntityManager, ends: readonly { holdId: string; life: CallState; captured: bigint | null }[]): Promise<void> {
    if (ends.length === 0) return;
    await m.query(
      `UPDATE payment.hold h SET life = x.life, open = x.open, captured_minor = x.captured, resolved_at = now()
         FROM unnest($1::uuid[], $2::jsonb[], $3::boolean[], $4::bigint[]) AS x(hold_id, life, open, captured) WHERE h.hold_id = x.hold_id`,
      [ends.map((e) => e.holdId), ends.map((e) => JSON.stringify(e.life)), ends.map((e) => !isTerminal(e.life)), ends.map((e) => e.captured?.toString() ?? null)]);
  },

};
