import { type EntityManager } from 'typeorm';
import { col, defineTable, lockCallRows, type RowOf, select } from '@tollgate/persistence';
import { type CallState, confirmedAttempt, providerOf } from '@tollgate/call-life';

/** `settlement.verification`: one row per call, its life as the call-life model's state plus the columns settlement queries. */
export const VERIFICATION = defineTable('settlement.verification', {
  intent_id: col.uuid().required(),
  life: col.jsonb<CallState>().required(),
  hold_id: col.uuid().nullable(),
  amount_minor: col.bigint().nullable(),
  asset: col.text().nullable(),
  owner_id: col.text().nullable(),
  provider_id: col.text().nullable(),
  effect: col.text<'confirmed' | 'rejected'>().nullable(),
  reason: col.text().nullable(),
  due_at: col.timestamptz().nullable(),
  state: col.text<'open' | 'settled' | 'refunded'>().required(),
  closed_at: col.timestamptz().nullable(),
  fee_minor: col.bigint().nullable(),
  net_minor: col.bigint().nullable(),
  payout_id: col.uuid().nullable(),
  trace_headers: col.jsonb<Record<string, string>>().nullable(),
});
export type VerificationRow = RowOf<typeof VERIFICATION>;

/** A call as the workflow loads it (locked, or claimed once its window closed: whether it is due is the model's to say). */
export type LoadedVerification = Pick<VerificationRow, 'intent_id' | 'life' | 'due_at' | 'trace_headers'>;

/** `dueInMs` opens the verification window (kept if already open), with the trace context of what opened it. */
export interface VerificationWindow {
  dueInMs?: number;
  traceHeaders?: Record<string, string>;
}

/** A saved state, and the window it opens. */
export interface VerificationChange extends VerificationWindow {
  intentId: string;
  life: CallState;
}

type Executor = Pick<EntityManager, 'query'>;

/**
 * The columns settlement's queries and finance's statements read, from the model: `state` is the model's end of the
 * money (settled, refunded, else open), the fee split is the one CallSettled carries. The refund reason is the
 * rejection's code.
 */
function derived(life: CallState) {
  const rejected = Object.values(life.attempts).find((a) => a.rejected)?.rejected;
  return {
    hold_id: life.held?.holdId ?? null, amount_minor: life.held?.amount.amountMinor ?? null, asset: life.held?.amount.asset ?? null,
    owner_id: life.held?.ownerId ?? null, provider_id: providerOf(life) ?? null,
    effect: confirmedAttempt(life) !== undefined ? 'confirmed' : rejected ? 'rejected' : null, reason: rejected?.code ?? null,
    state: life.settled ? 'settled' : life.refunded ? 'refunded' : 'open',
    fee_minor: life.settled?.fee?.amountMinor ?? null, net_minor: life.settled?.providerNet?.amountMinor ?? null,
  };
}

export const Verifications = {
  /** The states of these calls, locked; a call not seen yet gets its row first (`lockCallRows`). */
  lockLives(m: Executor, intentIds: readonly string[]): Promise<Map<string, LoadedVerification>> {
    return lockCallRows(m, VERIFICATION, ['intent_id', 'life', 'due_at', 'trace_headers'], intentIds);
  },

  /** Saves every changed call (locked) in one statement; the window, once open, keeps its due time; closed once. */
  async saveLives(m: Executor, changes: readonly VerificationChange[]): Promise<void> {
    if (changes.length === 0) return;
    const rows = changes.map((c) => ({ ...c, ...derived(c.life) }));
    const col = (f: (r: (typeof rows)[number]) => unknown) => rows.map(f);
    await m.query(
      `UPDATE settlement.verification v SET life = x.life, hold_id = x.hold_id, amount_minor = x.amount_minor, asset = x.asset, owner_id = x.owner_id,
              provider_id = x.provider_id, effect = x.effect, reason = x.reason, state = x.state, fee_minor = x.fee_minor, net_minor = x.net_minor,
              due_at = COALESCE(v.due_at, now() + x.due_in_ms * interval '1 millisecond'), trace_headers = COALESCE(v.trace_headers, x.trace_headers),
              closed_at = COALESCE(v.closed_at, CASE WHEN x.state <> 'open' THEN now() END)
         FROM unnest($1::uuid[], $2::jsonb[], $3::uuid[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::float8[], $11::jsonb[],
                     $12::text[], $13::bigint[], $14::bigint[])
           AS x(intent_id, life, hold_id, amount_minor, asset, owner_id, provider_id, effect, reason, due_in_ms, trace_headers, state, fee_minor, net_minor)
        WHERE v.intent_id = x.intent_id`,
      [col((r) => r.intentId), col((r) => JSON.stringify(r.life)), col((r) => r.hold_id), col((r) => r.amount_minor), col((r) => r.asset), col((r) => r.owner_id),
        col((r) => r.provider_id), col((r) => r.effect), col((r) => r.reason), col((r) => r.dueInMs ?? null),
        col((r) => (r.traceHeaders ? JSON.stringify(r.traceHeaders) : null)), col((r) => r.state), col((r) => r.fee_minor), col((r) => r.net_minor)],
    );
  },

  /**
   * Open calls whose window closed, oldest due first, locked (another instance skips them). The columns filtered are the
   * model's, derived on save (a confirmed effect, a hold, a provider), so rows that cannot be due yet never crowd the
   * batch; whether each is due is still `isSettlementDue`'s to say.
   */
  claimDue(m: Executor, limit: number): Promise<LoadedVerification[]> {
    return select(m, VERIFICATION, ['intent_id', 'life', 'due_at', 'trace_headers'],
      `SELECT intent_id, life, due_at, trace_headers FROM settlement.verification
        WHERE state = 'open' AND effect = 'confirmed' AND hold_id IS NOT NULL AND provider_id IS NOT NULL AND due_at <= now()
        ORDER BY due_at LIMIT $1 FOR UPDATE SKIP LOCKED`, [limit]);
  },
};
