import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import {
  attemptCount, type CallState, confirmedAttempt, failureOf, isAnswered, providerOf, receiptOf, resultAttempt, type UpstreamResult,
} from '@tollgate/call-life';
import { GATEWAY } from '../gateway.constants';
import { ANSWERING_TOPICS, OUTCOMES_CONSUMER } from '../record-outcome/outcome-events';

/** `gateway.call`: one row per call, its life as the call-life model's state plus the columns its queries need. */
export interface CallRow {
  intent_id: string;
  agent_id: string;
  mcp_url_id: string;
  tool_id: string;
  price_minor: string;
  asset: string;
  asset_decimals: number | null;
  access_policy: Record<string, unknown> | null;
  operation_key: string | null;
  deadline_at: Date | null;
  created_at: Date;
  /** The model's state; every column below is derived from it on save. */
  life: CallState;
  /** The body of the answer the agent is given (the result of the model's `resultAttempt`), erased by retention. */
  result: UpstreamResult | null;
  provider_id: string | null;
  attempts: number;
  classification: string | null;
  result_attempt: number | null;
  effect: 'confirmed' | null;
  effect_attempt: number | null;
  error: Record<string, unknown> | null;
  held_minor: string | null;
  x402_response: Record<string, unknown> | null;
  settlement: 'settled' | 'refunded' | null;
  answer_expired_at: Date | null;
  /** The model's `isAnswered`: the trigger wakes waiting requests (every replica) when it turns true. */
  answered: boolean;
}

export type NewCall = Pick<CallRow, 'intent_id' | 'agent_id' | 'mcp_url_id' | 'tool_id' | 'price_minor' | 'asset' | 'asset_decimals' | 'access_policy' | 'operation_key' | 'deadline_at' | 'life'>;

/**
 * What a call needs to answer its agent: the state, the body, and the row's own facts. `outcome_parked`: a fact that
 * could answer the call was parked by the gateway's consumer and not re-driven yet (read from the park itself).
 */
export type StoredCall = Pick<CallRow, 'intent_id' | 'agent_id' | 'tool_id' | 'asset' | 'asset_decimals' | 'created_at' | 'life' | 'result' | 'answer_expired_at'>
  & { outcome_parked: boolean };

/** Whether an answering fact of the call is parked, unresolved (a column expression over `gateway.call k`). */
const OUTCOME_PARKED = `EXISTS (SELECT 1 FROM gateway.parked_event p WHERE p.consumer = '${OUTCOMES_CONSUMER}' AND p.key = k.intent_id::text
  AND p.resolved_at IS NULL AND p.topic = ANY('{${ANSWERING_TOPICS.join(',')}}'::text[])) AS outcome_parked`;

/** A saved state, with the body of a result that arrived in this batch for the attempt the agent is given. */
export interface CallChange {
  intentId: string;
  life: CallState;
  body?: UpstreamResult;
}

type Executor = Pick<EntityManager, 'query'>;

const OUTCOME_COLUMNS = ['provider_id', 'attempts', 'classification', 'result_attempt', 'effect', 'effect_attempt', 'error', 'held_minor', 'x402_response', 'settlement', 'answered'] as const;

/** The outcome columns, from the model (kept for the queries and reports that filter on them). */
function derivedColumns(life: CallState): Record<(typeof OUTCOME_COLUMNS)[number], unknown> {
  const confirmed = confirmedAttempt(life);
  const failure = failureOf(life);
  const amount = life.held?.amount.amountMinor ?? life.settled?.amount.amountMinor;
  return {
    provider_id: providerOf(life) ?? null,
    attempts: attemptCount(life),
    classification: receiptOf(life).classification ?? null,
    result_attempt: resultAttempt(life) ?? null,
    effect: confirmed === undefined ? null : 'confirmed',
    effect_attempt: confirmed ?? null,
    error: failure ? JSON.stringify(failure) : null,
    held_minor: amount ?? null,
    x402_response: life.held?.x402PaymentResponse ? JSON.stringify(life.held.x402PaymentResponse) : null,
    settlement: life.settled ? 'settled' : life.refunded ? 'refunded' : null,
    answered: isAnswered(life),
  };
}

/** Every statement on `gateway.call` and `gateway.operation_key`. */
@Injectable()
export class CallsRepository {
  constructor(@InjectDataSource(GATEWAY) private readonly dataSource: DataSource) {}

  async insert(m: Executor, call: NewCall): Promise<void> {
    await m.query(
      `INSERT INTO gateway.call (intent_id, agent_id, mcp_url_id, tool_id, price_minor, asset, asset_decimals, access_policy, operation_key, deadline_at, life)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [call.intent_id, call.agent_id, call.mcp_url_id, call.tool_id, call.price_minor, call.asset, call.asset_decimals,
        call.access_policy ? JSON.stringify(call.access_policy) : null, call.operation_key, call.deadline_at, JSON.stringify(call.life)],
    );
  }

  async find(intentId: string, m: Executor = this.dataSource): Promise<StoredCall | undefined> {
    const [row] = (await m.query(
      `SELECT k.intent_id, k.agent_id, k.tool_id, k.asset, k.asset_decimals, k.created_at, k.life, k.result, k.answer_expired_at, ${OUTCOME_PARKED}
         FROM gateway.call k WHERE k.intent_id = $1`, [intentId],
    )) as StoredCall[];
    return row;
  }

  /** The states of these calls, locked for this transaction (in key order: two batches never wait on each other in a circle). */
  async lockLives(m: Executor, intentIds: readonly string[]): Promise<Map<string, CallState>> {
    const rows = (await m.query(
      'SELECT intent_id, life FROM gateway.call WHERE intent_id = ANY($1::uuid[]) ORDER BY intent_id FOR UPDATE', [intentIds],
    )) as Pick<CallRow, 'intent_id' | 'life'>[];
    return new Map(rows.map((r) => [r.intent_id, r.life]));
  }

  /** Saves states (and the columns derived from them) in one statement; a body arrived in the batch replaces the stored one. */
  async saveLives(m: Executor, changes: readonly CallChange[]): Promise<void> {
    if (changes.length === 0) return;
    const cols = changes.map((c) => derivedColumns(c.life));
    const col = (name: (typeof OUTCOME_COLUMNS)[number]) => cols.map((c) => (c[name] === null ? null : String(c[name])));
    await m.query(
      `UPDATE gateway.call c SET life = x.life, result = CASE WHEN c.answer_expired_at IS NULL THEN COALESCE(x.body, c.result) END, provider_id = x.provider_id, attempts = x.attempts,
              classification = x.classification, result_attempt = x.result_attempt, effect = x.effect, effect_attempt = x.effect_attempt,
              error = x.error, held_minor = x.held_minor, x402_response = CASE WHEN c.answer_expired_at IS NULL THEN x.x402_response END,
              settlement = x.settlement, answered = x.answered, updated_at = now()
         FROM unnest($1::uuid[], $2::jsonb[], $3::jsonb[], $4::text[], $5::int[], $6::text[], $7::int[], $8::text[], $9::int[], $10::jsonb[],
                     $11::bigint[], $12::jsonb[], $13::text[], $14::boolean[])
           AS x(intent_id, life, body, provider_id, attempts, classification, result_attempt, effect, effect_attempt, error, held_minor, x402_response, settlement, answered)
        WHERE c.intent_id = x.intent_id`,
      [changes.map((c) => c.intentId), changes.map((c) => JSON.stringify(c.life)), changes.map((c) => (c.body ? JSON.stringify(c.body) : null)),
        ...OUTCOME_COLUMNS.map(col)],
    );
  }

  /**
   * Free calls of these tools the agent used today (since 00:00 UTC): calls whose hold was a free one — what payment
   * counts against the quota (the model's `usedFreeCall`).
   */
  async freeCallsUsedToday(agentId: string, toolIds: readonly string[]): Promise<Map<string, number>> {
    const rows = (await this.dataSource.query(
      `SELECT tool_id, count(*)::int AS used FROM gateway.call
        WHERE agent_id = $1 AND tool_id = ANY($2) AND (life->'held'->>'free')::boolean
          AND created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
        GROUP BY tool_id`,
      [agentId, toolIds],
    )) as { tool_id: string; used: number }[];
    return new Map(rows.map((r) => [r.tool_id, r.used]));
  }

  /** Claims an operation key for a new call; false when the agent already used it (B5: the primary key decides). */
  async claimKey(m: Executor, key: { agentId: string; key: string; toolId: string; requestHash: string; intentId: string }): Promise<boolean> {
    const claimed = (await m.query(
      `INSERT INTO gateway.operation_key (agent_id, key, tool_id, request_hash, intent_id) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (agent_id, key) DO NOTHING RETURNING intent_id`,
      [key.agentId, key.key, key.toolId, key.requestHash, key.intentId],
    )) as unknown[];
    return claimed.length > 0;
  }

  /** The key's current call and its state, locked: whether a retry may take the key over is the model's decision. */
  async lockKey(m: Executor, agentId: string, key: string): Promise<{ intent_id: string; tool_id: string; request_hash: string; life: CallState } | undefined> {
    const [row] = (await m.query(
      `SELECT k.intent_id, k.tool_id, k.request_hash, c.life FROM gateway.operation_key k JOIN gateway.call c ON c.intent_id = k.intent_id
        WHERE k.agent_id = $1 AND k.key = $2 FOR UPDATE OF k`,
      [agentId, key],
    )) as { intent_id: string; tool_id: string; request_hash: string; life: CallState }[];
    return row;
  }

  async retakeKey(m: Executor, agentId: string, key: string, intentId: string): Promise<void> {
    await m.query('UPDATE gateway.operation_key SET intent_id = $3 WHERE agent_id = $1 AND key = $2', [agentId, key, intentId]);
  }

  async findKey(agentId: string, key: string): Promise<{ intent_id: string; tool_id: string; request_hash: string } | undefined> {
    const [row] = (await this.dataSource.query(
      'SELECT intent_id, tool_id, request_hash FROM gateway.operation_key WHERE agent_id = $1 AND key = $2', [agentId, key],
    )) as { intent_id: string; tool_id: string; request_hash: string }[];
    return row;
  }

  /**
   * A call as its waiting request reads it, with R7's check in the same statement: whether the credential and the
   * URL still grant access (checked again after the call's I/O).
   */
  async findForCaller(intentId: string, credentialId: string, mcpUrlId: string): Promise<(StoredCall & { access_held: boolean }) | undefined> {
    const [row] = (await this.dataSource.query(
      `SELECT k.intent_id, k.agent_id, k.tool_id, k.asset, k.asset_decimals, k.created_at, k.life, k.result, k.answer_expired_at, ${OUTCOME_PARKED},
              coalesce((SELECT c.revoked_at IS NULL AND u.disabled_at IS NULL FROM gateway.credential c, gateway.mcp_url u
                         WHERE c.credential_id = $2 AND u.mcp_url_id = $3), false) AS access_held
         FROM gateway.call k WHERE k.intent_id = $1`,
      [intentId, credentialId, mcpUrlId],
    )) as (StoredCall & { access_held: boolean })[];
    return row;
  }

  /** The catalog row of a tool this instance has not loaded into memory yet. */
  async catalogDoc<T>(name: string): Promise<T | undefined> {
    const [row] = (await this.dataSource.query('SELECT doc FROM gateway.catalog_tool WHERE name = $1', [name])) as { doc: T }[];
    return row?.doc;
  }
}
