import { type EntityManager } from 'typeorm';
import { lockCallRows } from '@tollgate/persistence';
import { type CallState, confirmedAttempt, providerOf } from '@tollgate/call-life';

/** `settlement.verification`: one row per call, its life as the call-life model's state plus the columns settlement queries. */
export interface VerificationRow {
  intent_id: string;
  life: CallState;
  hold_id: string | null;
  amount_minor: string | null;
  asset: string | null;
  owner_id: string | null;
  provider_id: string | null;
  effect: 'confirmed' | 'rejected' | null;
  reason: string | null;
  due_at: Date | null;
  state: 'open' | 'settled' | 'refunded';
  closed_at: Date | null;
  fee_minor: string | null;
  net_minor: string | null;
  payout_id: string | null;
  trace_headers: Record<string, string> | null;
}

/** A call due for settlement, as `claimDue` returns it. */
export type DueSettlement = Pick<VerificationRow, 'intent_id' | 'owner_id' | 'trace_headers'> & { hold_id: string; amount_minor: string; asset: string; provider_id: string };

export type LoadedVerification = Pick<VerificationRow, 'intent_id' | 'life' | 'due_at' | 'state'>;

/** A saved state; `dueInMs` opens the verification window (kept if already open), `refunded` closes the call. */
export interface VerificationChange {
  intentId: string;
  life: CallState;
  dueInMs?: number;
  traceHeaders?: Record<string, string>;
  refunded?: boolean;
}

type Executor = Pick<EntityManager, 'query'>;

/** The columns settlement filters on, from the model. The refund reason is the rejection's code (what finance reads). */
function derived(life: CallState) {
  const rejected = Object.values(life.attempts).find((a) => a.rejected)?.rejected;
  return {
    hold_id: life.held?.holdId ?? null, amount_minor: life.held?.amount.amountMinor ?? null, asset: life.held?.amount.asset ?? null,
    owner_id: life.held?.ownerId ?? null, provider_id: providerOf(life) ?? null,
    effect: confirmedAttempt(life) !== undefined ? 'confirmed' : rejected ? 'rejected' : null, reason: rejected?.code ?? null,
  };
}

export class VerificationRepository {
  /** The states of these calls, locked; a call not seen yet gets its row first (`lockCallRows`). */
  lockLives(m: Executor, intentIds: readonly string[]): Promise<Map<string, LoadedVerification>> {
    return lockCallRows<LoadedVerification>(m, 'settlement.verification', 'intent_id, life, due_at, state', intentIds);
  }

  /** Saves every changed call (locked by `lockLives`) in one statement; the window, once open, keeps its due time. */
  async saveLives(m: Executor, changes: readonly VerificationChange[]): Promise<void> {
    if (changes.length === 0) return;
    const rows = changes.map((c) => ({ ...c, ...derived(c.life) }));
    await m.query(
      `UPDATE settlement.verification v SET life = x.life, hold_id = x.hold_id, amount_minor = x.amount_minor, asset = x.asset, owner_id = x.owner_id,
              provider_id = x.provider_id, effect = x.effect, reason = x.reason,
              due_at = COALESCE(v.due_at, now() + x.due_in_ms * interval '1 millisecond'), trace_headers = COALESCE(v.trace_headers, x.trace_headers),
              state = CASE WHEN v.state = 'open' AND x.refunded THEN 'refunded' ELSE v.state END,
              closed_at = CASE WHEN v.state = 'open' AND x.refunded THEN now() ELSE v.closed_at END
         FROM unnest($1::uuid[], $2::jsonb[], $3::uuid[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::float8[], $11::jsonb[], $12::boolean[])
           AS x(intent_id, life, hold_id, amount_minor, asset, owner_id, provider_id, effect, reason, due_in_ms, trace_headers, refunded)
        WHERE v.intent_id = x.intent_id`,
      [rows.map((r) => r.intentId), rows.map((r) => JSON.stringify(r.life)), rows.map((r) => r.hold_id), rows.map((r) => r.amount_minor),
        rows.map((r) => r.asset), rows.map((r) => r.owner_id), rows.map((r) => r.provider_id), rows.map((r) => r.effect), rows.map((r) => r.reason),
        rows.map((r) => r.dueInMs ?? null), rows.map((r) => (r.traceHeaders ? JSON.stringify(r.traceHeaders) : null)), rows.map((r) => r.refunded === true)],
    );
  }

  /** Calls whose window closed with a confirmed effect, oldest due first, locked (another instance skips them). */
  async claimDue(m: Executor, limit: number): Promise<DueSettlement[]> {
    return (await m.query(
      `SELECT intent_id, hold_id, amount_minor, asset, provider_id, owner_id, trace_headers FROM settlement.verification
        WHERE state = 'open' AND effect = 'confirmed' AND due_at <= now() AND hold_id IS NOT NULL AND provider_id IS NOT NULL
        ORDER BY due_at LIMIT $1 FOR UPDATE SKIP LOCKED`,
      [limit],
    )) as DueSettlement[];
  }

  /** Closes claimed calls as settled with their fee split, in one statement. */
  async markSettled(m: Executor, settled: readonly { intentId: string; fee: bigint; net: bigint }[]): Promise<void> {
    if (settled.length === 0) return;
    await m.query(
      `UPDATE settlement.verification v SET state = 'settled', closed_at = now(), fee_minor = x.fee, net_minor = x.net
         FROM unnest($1::uuid[], $2::bigint[], $3::bigint[]) AS x(intent_id, fee, net) WHERE v.intent_id = x.intent_id`,
      [settled.map((s) => s.intentId), settled.map((s) => s.fee.toString()), settled.map((s) => s.net.toString())],
    );
  }
}
