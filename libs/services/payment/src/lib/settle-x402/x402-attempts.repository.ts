import { type DataSource, type EntityManager } from 'typeorm';
import { type CallRequestedPayload } from '@tollgate/contracts';
import { col, defineTable, returnedRows, type RowOf, select } from '@tollgate/persistence';
import { type PaymentPayload, type PaymentRequirements, type SettleResponse } from '../x402/x402.types';

/** `payment.x402_attempt`: an x402 payment's durable steps. */
export const X402_ATTEMPT = defineTable('payment.x402_attempt', {
  intent_id: col.uuid().required(),
  state: col.text<'verifying' | 'settling' | 'settled' | 'refused'>().required(),
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
  unknown_since: col.timestamptz().nullable(),
  last_problem: col.text().nullable(),
  transaction: col.text().nullable(),
  refusal: col.text().nullable(),
  created_at: col.timestamptz().required(),
  updated_at: col.timestamptz().required(),
});
export type X402AttemptRow = RowOf<typeof X402_ATTEMPT>;
const ATTEMPT_COLUMNS = Object.keys(X402_ATTEMPT.columns) as (keyof X402AttemptRow)[];
const COUNTS = defineTable('(x402 counts)', { open: col.integer().required(), unknown: col.integer().required() });

export type NewX402Attempt = Pick<X402AttemptRow, 'intent_id' | 'network' | 'payer' | 'nonce' | 'amount_minor' | 'asset' | 'facilitator' | 'payment_id' | 'payment' | 'requirements' | 'request' | 'causation_id' | 'approved'>;

/** An open attempt as the admin API lists it. */
export interface OpenX402Attempt {
  intentId: string;
  state: 'verifying' | 'settling';
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
       INSERT INTO payment.x402_attempt (intent_id, state, network, payer, nonce, amount_minor, asset, facilitator, payment_id, payment, requirements, request, causation_id, approved)
       SELECT $1, 'verifying', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13 FROM spent RETURNING 1`,
      [a.intent_id, a.network, a.payer, a.nonce, a.amount_minor, a.asset, a.facilitator, a.payment_id, JSON.stringify(a.payment), JSON.stringify(a.requirements),
        JSON.stringify(a.request), a.causation_id, a.approved],
    ));
    return rows.length > 0;
  },

  /** Takes the oldest due open attempt for `leaseMs` (a crashed worker's lease runs out and another resumes it). */
  async claimDue(ds: DataSource, leaseMs: number): Promise<X402AttemptRow | undefined> {
    const [row] = await select(ds, X402_ATTEMPT, ATTEMPT_COLUMNS,
      `UPDATE payment.x402_attempt SET lease_until = now() + ($1::int * interval '1 millisecond'), tries = tries + 1, updated_at = now()
        WHERE intent_id = (SELECT intent_id FROM payment.x402_attempt
                            WHERE state IN ('verifying', 'settling') AND next_try_at <= now() AND (lease_until IS NULL OR lease_until < now())
                            ORDER BY next_try_at LIMIT 1 FOR UPDATE SKIP LOCKED)
        RETURNING *`, [leaseMs]);
    return row;
  },

  /** Verified: the settle step is recorded before the facilitator is asked to move money. */
  async markSettling(ds: DataSource, intentId: string, payer: string): Promise<void> {
    await ds.query(`UPDATE payment.x402_attempt SET state = 'settling', payer = $2, updated_at = now() WHERE intent_id = $1 AND state = 'verifying'`, [intentId, payer]);
  },

  /** Not known yet (facilitator unavailable, or a settle outcome unknown): asked again after `delayMs`. */
  async retryLater(ds: DataSource, intentId: string, delayMs: number, problem: string, settleUnknown: boolean): Promise<void> {
    await ds.query(
      `UPDATE payment.x402_attempt SET next_try_at = now() + ($2::int * interval '1 millisecond'), lease_until = NULL, last_problem = $3,
              unknown_since = CASE WHEN $4 THEN COALESCE(unknown_since, now()) ELSE unknown_since END, updated_at = now()
        WHERE intent_id = $1 AND state IN ('verifying', 'settling')`,
      [intentId, delayMs, problem.slice(0, 500), settleUnknown],
    );
  },

  /**
   * The outcome, once: false when another worker recorded it first. A refusal gives the nonce back when the chain never
   * used it (`releaseNonce`): a payload nobody could settle (a forged signature over someone else's authorization) must
   * not burn that authorization for its real owner. A nonce the chain used stays spent.
   */
  async finish(m: EntityManager, intentId: string, outcome: { settled: SettleResponse } | { refused: string; releaseNonce: boolean }): Promise<boolean> {
    const settled = 'settled' in outcome;
    const release = !settled && outcome.releaseNonce;
    const rows = returnedRows<unknown>(await m.query(
      `WITH done AS (
         UPDATE payment.x402_attempt SET state = $2, transaction = $3, refusal = $4, lease_until = NULL, updated_at = now()
          WHERE intent_id = $1 AND state IN ('verifying', 'settling') RETURNING intent_id),
       released AS (DELETE FROM payment.x402_nonce n USING done WHERE $5 AND n.intent_id = done.intent_id RETURNING 1)
       SELECT 1 FROM done`,
      [intentId, settled ? 'settled' : 'refused', settled ? outcome.settled.transaction : null, settled ? null : outcome.refused.slice(0, 200), release],
    ));
    return rows.length > 0;
  },

  /** The open attempts, oldest first (at most 500), as ops see them: no payload, no signature. */
  async listOpen(ds: DataSource): Promise<OpenX402Attempt[]> {
    const rows = await select(ds, X402_ATTEMPT, ['intent_id', 'state', 'network', 'payer', 'nonce', 'amount_minor', 'asset', 'tries', 'unknown_since', 'last_problem', 'next_try_at', 'created_at'],
      `SELECT intent_id, state, network, payer, nonce, amount_minor, asset, tries, unknown_since, last_problem, next_try_at, created_at
         FROM payment.x402_attempt WHERE state IN ('verifying', 'settling') ORDER BY created_at LIMIT 500`);
    return rows.map((r) => ({
      intentId: r.intent_id, state: r.state === 'settling' ? 'settling' : 'verifying', network: r.network, payer: r.payer, nonce: r.nonce, amountMinor: r.amount_minor,
      asset: r.asset, tries: r.tries, unknownSince: r.unknown_since, lastProblem: r.last_problem, nextTryAt: r.next_try_at, createdAt: r.created_at,
    }));
  },

  /** Attempts whose settlement the facilitator has not confirmed either way yet (ops and /metrics). */
  async openCounts(ds: DataSource): Promise<{ open: number; unknown: number }> {
    const [r] = await select(ds, COUNTS, ['open', 'unknown'],
      `SELECT count(*)::int AS open, count(*) FILTER (WHERE unknown_since IS NOT NULL)::int AS unknown FROM payment.x402_attempt WHERE state IN ('verifying', 'settling')`);
    return r ?? { open: 0, unknown: 0 };
  },
};
