import { type DataSource, type EntityManager } from 'typeorm';
import { type CallRequestedPayload } from '@tollgate/contracts';
import { col, defineTable, returnedRows, type RowOf, select } from '@tollgate/persistence';
import { accountAround, AGENT_LOCK_PREFIX } from '../payment.sql';
import { type PaymentPayload, type PaymentRequirements } from '../x402/x402.types';
import { type AttemptScheme, isOpenX402Attempt, recordedX402Attempt, type X402AttemptLife } from './x402-attempt.model';

/** `payment.x402_nonce`: each authorization's nonce, spent once (by the call that recorded it). */
export const X402_NONCE = defineTable('payment.x402_nonce', {
  network: col.text().required(), payer: col.text().required(), nonce: col.text().required(), intent_id: col.uuid().required(), created_at: col.timestamptz().required(),
});

/** `payment.x402_attempt`: an x402 payment's durable record; its life is the sub-model's (`X402AttemptLife`). */
export const X402_ATTEMPT = defineTable('payment.x402_attempt', {
  intent_id: col.uuid().required(),
  life: col.jsonb<X402AttemptLife>().required(),
  open: col.boolean().required(),
  network: col.text().required(),
  payer: col.text().required(),
  nonce: col.text().required(),
  amount_minor: col.bigint().required(),
  asset: col.text().required(),
  facilitator: col.text().required(),
  payment_id: col.text().required(),
  payment: col.jsonb<PaymentPayload>().required(),
  requirements: col.jsonb<PaymentRequirements>().required(),
  request: col.jsonb<CallRequestedPayload>().required(),
  causation_id: col.uuid().required(),
  approved: col.boolean().required(),
  tries: col.integer().required(),
  next_try_at: col.timestamptz().required(),
  lease_until: col.timestamptz().nullable(),
  created_at: col.timestamptz().required(),
  updated_at: col.timestamptz().required(),
});
export type X402AttemptRow = RowOf<typeof X402_ATTEMPT>;
const ATTEMPT_COLUMNS = Object.keys(X402_ATTEMPT.columns) as (keyof X402AttemptRow)[];
const COUNTS = defineTable('(x402 counts)', { open: col.integer().required(), unknown: col.integer().required() });

/** An attempt locked for its verdict, with its owner's wallet as the verdict's postings find it. */
export interface PayingCall {
  attempt: X402AttemptRow;
  available: bigint;
  /** What the owner owes (the debt account's balance, as a positive amount). */
  owed: bigint;
}
const PAYING = defineTable('(paying)', { ...X402_ATTEMPT.columns, available: col.bigint().nullable(), debt: col.bigint().nullable() });


export type NewX402Attempt = Pick<X402AttemptRow, 'intent_id' | 'network' | 'payer' | 'nonce' | 'amount_minor' | 'asset' | 'facilitator' | 'payment_id' | 'payment' | 'requirements' | 'request' | 'causation_id' | 'approved'>;

/** An open attempt as the admin API lists it. */
export interface OpenX402Attempt {
  intentId: string;
  /** `uncollected`: an upto charge the facilitator would not settle (ended, kept here for ops: the owner owes it). */
  state: 'verifying' | 'settling' | 'collecting' | 'uncollected';
  network: string;
  payer: string;
  nonce: string;
  amountMinor: string;
  asset: string;
  tries: number;
  /** Since when no verdict is known (a settle unanswered or unconfirmed by the chain); null: none asked yet. */
  unknownSince: Date | null;
  lastProblem: string | null;
  nextTryAt: Date;
  createdAt: Date;
}

/** Every statement on `payment.x402_attempt` and the nonce it spends. */
export const X402Attempts = {
  /** Spends the authorization's nonce and records the attempt, in the CallRequested's transaction; false: the nonce was spent before. */
  async record(m: EntityManager, a: NewX402Attempt): Promise<boolean> {
    const rows = returnedRows<unknown>(await m.query(
      `WITH spent AS (
         INSERT INTO payment.x402_nonce (network, payer, nonce, intent_id) VALUES ($2, $3, $4, $1) ON CONFLICT DO NOTHING RETURNING 1)
       INSERT INTO payment.x402_attempt (intent_id, life, open, network, payer, nonce, amount_minor, asset, facilitator, payment_id, payment, requirements, request, causation_id, approved)
       SELECT $1, $14, true, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13 FROM spent RETURNING 1`,
      [a.intent_id, a.network, a.payer, a.nonce, a.amount_minor, a.asset, a.facilitator, a.payment_id, JSON.stringify(a.payment), JSON.stringify(a.requirements),
        JSON.stringify(a.request), a.causation_id, a.approved, JSON.stringify(recordedX402Attempt(a.payer, schemeOf(a.requirements.scheme)))],
    ));
    return rows.length > 0;
  },

  /** Whether this payer's nonce on this network was spent by a call already (read before deciding; `record` spends it). */
  async nonceUsed(m: EntityManager, network: string, payer: string, nonce: string): Promise<boolean> {
    const rows = returnedRows<unknown>(await m.query('SELECT 1 FROM payment.x402_nonce WHERE network = $1 AND payer = $2 AND nonce = $3', [network, payer, nonce]));
    return rows.length > 0;
  },

  /** Due attempts (their time come, no live lease), oldest first, locked for the runner's due work (other instances skip them). */
  async claimDue(m: EntityManager, limit: number): Promise<X402AttemptRow[]> {
    return select(m, X402_ATTEMPT, ATTEMPT_COLUMNS,
      `SELECT * FROM payment.x402_attempt WHERE open AND next_try_at <= now() AND (lease_until IS NULL OR lease_until < now())
        ORDER BY next_try_at LIMIT $1 FOR UPDATE SKIP LOCKED`, [limit]);
  },

  /** Leased to a step for `leaseMs`, one more try counted: a step whose process dies leaves it due again once the lease runs out. */
  async lease(m: EntityManager, intentIds: readonly string[], leaseMs: number): Promise<void> {
    await m.query(`UPDATE payment.x402_attempt SET lease_until = now() + ($2::int * interval '1 millisecond'), tries = tries + 1, updated_at = now()
                    WHERE intent_id = ANY($1::uuid[])`, [[...intentIds], leaseMs]);
  },

  /**
   * The attempts of these calls locked, each with its owner's available balance and debt locked too (the verdict's
   * postings read them) — after the agents' locks (a hold counts against the agent's limits).
   */
  async lockPaying(m: EntityManager, intentIds: readonly string[]): Promise<Map<string, PayingCall>> {
    await m.query(`SELECT pg_advisory_xact_lock(hashtext($2 || k)) FROM (SELECT DISTINCT request->>'agentId' AS k FROM payment.x402_attempt WHERE intent_id = ANY($1::uuid[]) ORDER BY 1) s`,
      [[...intentIds], AGENT_LOCK_PREFIX]);
    const rows = await select(m, PAYING, [...ATTEMPT_COLUMNS, 'available', 'debt'],
      `SELECT a.*, (SELECT b.balance FROM payment.balance b WHERE b.account = $2 || (a.request->>'ownerId') || $3 AND b.asset = a.asset FOR UPDATE) AS available,
              (SELECT b.balance FROM payment.balance b WHERE b.account = $4 || (a.request->>'ownerId') || $5 AND b.asset = a.asset FOR UPDATE) AS debt
         FROM payment.x402_attempt a WHERE a.intent_id = ANY($1::uuid[]) ORDER BY a.intent_id FOR UPDATE OF a`,
      [[...intentIds], ...accountAround('available'), ...accountAround('debt')]);
    return new Map(rows.map(({ available, debt, ...attempt }) => {
      const d = BigInt(debt ?? '0');
      return [attempt.intent_id, { attempt, available: BigInt(available ?? '0'), owed: d < 0n ? -d : 0n }];
    }));
  },

  /**
   * The attempt's next life saved with what follows from it: a verdict awaited is asked again after `retryInMs` (the
   * lease freed), an end frees the lease, and a refusal gives the nonce back when the chain never used it
   * (`releaseNonce`): a payload nobody could settle (a forged signature over someone else's authorization) must not burn
   * that authorization for its real owner; a nonce the chain used stays spent.
   */
  async saveLife(m: EntityManager, intentId: string, life: X402AttemptLife, o: { keepLease: boolean; retryInMs: number; releaseNonce: boolean }): Promise<void> {
    await m.query(
      `UPDATE payment.x402_attempt SET life = $2, open = $3, payer = $4, updated_at = now(),
              lease_until = CASE WHEN $5 THEN lease_until END, next_try_at = now() + ($6::int * interval '1 millisecond')
        WHERE intent_id = $1`,
      [intentId, JSON.stringify(life), isOpenX402Attempt(life), life.payer, o.keepLease, o.retryInMs]);
    if (o.releaseNonce) await m.query('DELETE FROM payment.x402_nonce WHERE intent_id = $1', [intentId]);
  },

  /** The open attempts and the uncollected upto charges, oldest first (at most 500), as ops see them: no payload, no signature. */
  async listOpen(ds: DataSource): Promise<OpenX402Attempt[]> {
    const rows = await select(ds, X402_ATTEMPT, ['intent_id', 'life', 'network', 'payer', 'nonce', 'amount_minor', 'asset', 'tries', 'next_try_at', 'created_at'],
      `SELECT intent_id, life, network, payer, nonce, amount_minor, asset, tries, next_try_at, created_at
         FROM payment.x402_attempt WHERE open OR life->>'step' = 'uncollected' ORDER BY created_at LIMIT 500`);
    return rows.map((r) => ({
      intentId: r.intent_id, state: r.life.step === 'settling' || r.life.step === 'collecting' || r.life.step === 'uncollected' ? r.life.step : 'verifying', network: r.network, payer: r.payer, nonce: r.nonce, amountMinor: r.amount_minor,
      asset: r.asset, tries: r.tries, unknownSince: r.life.unknownSince ? new Date(r.life.unknownSince) : null, lastProblem: r.life.problem ?? null,
      nextTryAt: r.next_try_at, createdAt: r.created_at,
    }));
  },

  /** Attempts whose settlement the facilitator has not confirmed either way yet (ops and /metrics). */
  async openCounts(ds: DataSource): Promise<{ open: number; unknown: number }> {
    const [r] = await select(ds, COUNTS, ['open', 'unknown'],
      `SELECT count(*)::int AS open, count(*) FILTER (WHERE life ? 'unknownSince')::int AS unknown FROM payment.x402_attempt WHERE open`);
    return r ?? { open: 0, unknown: 0 };
  },
};

/** The attempt's scheme from its requirement's (x402 `exact` / `upto`, MPP `mpp` / `mpp-authorize`). */
function schemeOf(scheme: string | undefined): 'exact' | AttemptScheme {
  return scheme === 'upto' || scheme === 'mpp' || scheme === 'mpp-authorize' ? scheme : 'exact';
}
