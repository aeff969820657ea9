import { type EntityManager } from 'typeorm';
import { type CallState, isAnswered, type UpstreamResult } from '@tollgate/call-life';
import { col, defineTable, type RowOf, select } from '@tollgate/persistence';
import { ANSWERING_TOPICS, OUTCOMES_CONSUMER } from './outcome-events';

/** `gateway.call`: one row per call, its life as the call-life model's state plus the columns its queries need. */
export const CALL = defineTable('gateway.call', {
  intent_id: col.uuid().required(),
  agent_id: col.uuid().required(),
  mcp_url_id: col.uuid().required(),
  tool_id: col.text().required(),
  price_minor: col.bigint().required(),
  asset: col.text().required(),
  asset_decimals: col.integer().nullable(),
  access_policy: col.jsonb<Record<string, unknown>>().nullable(),
  operation_key: col.text().nullable(),
  deadline_at: col.timestamptz().nullable(),
  created_at: col.timestamptz().required(),
  updated_at: col.timestamptz().required(),
  /** The model's state: the answer, the receipt and a repeat's verdict are read from it. */
  life: col.jsonb<CallState>().required(),
  /** The body of the answer the agent is given (the result of the model's `resultAttempt`), erased by retention. */
  result: col.jsonb<UpstreamResult>().nullable(),
  answer_expired_at: col.timestamptz().nullable(),
  /** The model's `isAnswered`, the one column derived from it: its trigger wakes waiting requests (every replica) when it turns true. */
  answered: col.boolean().required(),
});
export type CallRow = RowOf<typeof CALL>;

/** `gateway.operation_key`: an agent's operation key and the call it belongs to (B5: the primary key decides). */
export const OPERATION_KEY = defineTable('gateway.operation_key', {
  agent_id: col.uuid().required(),
  key: col.text().required(),
  tool_id: col.text().required(),
  request_hash: col.text().required(),
  intent_id: col.uuid().required(),
  created_at: col.timestamptz().required(),
});

/** What a waiting request reads besides the row: whether an answering fact is parked, and whether access still holds. */
const CALL_AS_READ = defineTable(CALL.name, { ...CALL.columns, outcome_parked: col.boolean().required(), access_held: col.boolean().required() });
/** Free calls used today, per tool (an aggregate over gateway.call). */
const FREE_CALLS_USED = defineTable('gateway.call (free calls used)', { tool_id: col.text().required(), used: col.integer().required() });
/** An operation key with its call's state (a join). */
const KEY_WITH_LIFE = defineTable('gateway.operation_key + call', { ...OPERATION_KEY.columns, life: CALL.columns.life });
const STORED = ['intent_id', 'agent_id', 'tool_id', 'asset', 'asset_decimals', 'created_at', 'life', 'result', 'answer_expired_at', 'outcome_parked'] as const;

export type NewCall = Pick<CallRow, 'intent_id' | 'agent_id' | 'mcp_url_id' | 'tool_id' | 'price_minor' | 'asset' | 'asset_decimals' | 'access_policy' | 'operation_key' | 'deadline_at' | 'life'>;

/**
 * What a call needs to answer its agent: the state, the body, and the row's own facts. `outcome_parked`: a fact that
 * could answer the call was parked by the gateway's consumer and not re-driven yet (read from the park itself).
 */
export type StoredCall = Pick<RowOf<typeof CALL_AS_READ>, (typeof STORED)[number]>;

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

const INSERTED = 'tollgateCallsInserted';

/**
 * The calls this transaction inserted, with the state it wrote. An insert locks its row until the transaction ends,
 * so the first fold in the same transaction (embedded mode: the hold, applied as the request commits) takes the state
 * from here instead of reading the row again. A save forgets the call: a savepoint may undo the save, so later folds
 * read the row. Kept on the transaction's query runner: a new transaction starts empty.
 */
function insertedIn(m: Executor): Map<string, CallState> | undefined {
  const runner = (m as Partial<EntityManager>).queryRunner;
  if (!runner?.isTransactionActive) return undefined;
  return (runner.data[INSERTED] ??= new Map()) as Map<string, CallState>;
}

/** Every statement on `gateway.call` and `gateway.operation_key`. */
export const Calls = {

  async insert(m: Executor, call: NewCall): Promise<void> {
    await m.query(
      `INSERT INTO gateway.call (intent_id, agent_id, mcp_url_id, tool_id, price_minor, asset, asset_decimals, access_policy, operation_key, deadline_at, life)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
      [call.intent_id, call.agent_id, call.mcp_url_id, call.tool_id, call.price_minor, call.asset, call.asset_decimals,
        call.access_policy ? JSON.stringify(call.access_policy) : null, call.operation_key, call.deadline_at, JSON.stringify(call.life)],
    );
    insertedIn(m)?.set(call.intent_id, call.life);
  },

  async find(m: Executor, intentId: string): Promise<StoredCall | undefined> {
    const [row] = await select(m, CALL_AS_READ, STORED,
      `SELECT k.intent_id, k.agent_id, k.tool_id, k.asset, k.asset_decimals, k.created_at, k.life, k.result, k.answer_expired_at, ${OUTCOME_PARKED}
         FROM gateway.call k WHERE k.intent_id = $1`, [intentId]);
    return row;
  },

  /**
   * The states of these calls, locked for this transaction (in key order: two batches never wait on each other in a
   * circle); a call this transaction inserted and has not saved since is known already, locked by its insert.
   */
  async lockLives(m: Executor, intentIds: readonly string[]): Promise<Map<string, CallState>> {
    const inserted = insertedIn(m);
    const known = new Map(intentIds.flatMap((id) => (inserted?.has(id) ? [[id, inserted.get(id)!] as const] : [])));
    const rest = intentIds.filter((id) => !known.has(id));
    if (rest.length === 0) return known;
    const rows = await select(m, CALL, ['intent_id', 'life'], 'SELECT intent_id, life FROM gateway.call WHERE intent_id = ANY($1::uuid[]) ORDER BY intent_id FOR UPDATE', [rest]);
    return new Map([...known, ...rows.map((r) => [r.intent_id, r.life] as const)]);
  },

  /** Saves states (and `answered`, from the model) in one statement; a body arrived in the batch replaces the stored one. */
  async saveLives(m: Executor, changes: readonly CallChange[]): Promise<void> {
    if (changes.length === 0) return;
    const inserted = insertedIn(m);
    for (const c of changes) inserted?.delete(c.intentId);
    await m.query(
      `UPDATE gateway.call c SET life = x.life, result = CASE WHEN c.answer_expired_at IS NULL THEN COALESCE(x.body, c.result) END,
              answered = x.answered, updated_at = now()
         FROM unnest($1::uuid[], $2::jsonb[], $3::jsonb[], $4::boolean[]) AS x(intent_id, life, body, answered)
        WHERE c.intent_id = x.intent_id`,
      [changes.map((c) => c.intentId), changes.map((c) => JSON.stringify(c.life)), changes.map((c) => (c.body ? JSON.stringify(c.body) : null)),
        changes.map((c) => isAnswered(c.life))],
    );
  },

  /**
   * Free calls of these tools the agent used today (since 00:00 UTC): calls whose hold was a free one — what payment
   * counts against the quota (the model's `usedFreeCall`).
   */
  async freeCallsUsedToday(m: Executor, agentId: string, toolIds: readonly string[]): Promise<Map<string, number>> {
    const rows = await select(m, FREE_CALLS_USED, ['tool_id', 'used'],
      `SELECT tool_id, count(*)::int AS used FROM gateway.call
        WHERE agent_id = $1 AND tool_id = ANY($2) AND (life->'held'->>'free')::boolean
          AND created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
        GROUP BY tool_id`,
      [agentId, toolIds]);
    return new Map(rows.map((r) => [r.tool_id, r.used]));
  },

  /** Claims an operation key for a new call; false when the agent already used it (B5: the primary key decides). */
  async claimKey(m: Executor, key: { agentId: string; key: string; toolId: string; requestHash: string; intentId: string }): Promise<boolean> {
    const claimed = await select(m, OPERATION_KEY, ['intent_id'],
      `INSERT INTO gateway.operation_key (agent_id, key, tool_id, request_hash, intent_id) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (agent_id, key) DO NOTHING RETURNING intent_id`,
      [key.agentId, key.key, key.toolId, key.requestHash, key.intentId]);
    return claimed.length > 0;
  },

  /** The key's current call and its state, locked: whether a retry may take the key over is the model's decision. */
  async lockKey(m: Executor, agentId: string, key: string): Promise<{ intent_id: string; tool_id: string; request_hash: string; life: CallState } | undefined> {
    const [row] = await select(m, KEY_WITH_LIFE, ['intent_id', 'tool_id', 'request_hash', 'life'],
      `SELECT k.intent_id, k.tool_id, k.request_hash, c.life FROM gateway.operation_key k JOIN gateway.call c ON c.intent_id = k.intent_id
        WHERE k.agent_id = $1 AND k.key = $2 FOR UPDATE OF k`,
      [agentId, key]);
    return row;
  },

  async retakeKey(m: Executor, agentId: string, key: string, intentId: string): Promise<void> {
    await m.query('UPDATE gateway.operation_key SET intent_id = $3 WHERE agent_id = $1 AND key = $2', [agentId, key, intentId]);
  },

  async findKey(m: Executor, agentId: string, key: string): Promise<{ intent_id: string; tool_id: string; request_hash: string } | undefined> {
    const [row] = await select(m, OPERATION_KEY, ['intent_id', 'tool_id', 'request_hash'],
      'SELECT intent_id, tool_id, request_hash FROM gateway.operation_key WHERE agent_id = $1 AND key = $2', [agentId, key]);
    return row;
  },

  /**
   * A call as its waiting request reads it, with R7's check in the same statement: whether the credential and the
   * URL still grant access (checked again after the call's I/O).
   */
  async findForCaller(m: Executor, intentId: string, credentialId: string, mcpUrlId: string): Promise<(StoredCall & { access_held: boolean }) | undefined> {
    const [row] = await select(m, CALL_AS_READ, [...STORED, 'access_held'],
      `SELECT k.intent_id, k.agent_id, k.tool_id, k.asset, k.asset_decimals, k.created_at, k.life, k.result, k.answer_expired_at, ${OUTCOME_PARKED},
              coalesce((SELECT c.revoked_at IS NULL AND u.disabled_at IS NULL FROM gateway.credential c, gateway.mcp_url u
                         WHERE c.credential_id = $2 AND u.mcp_url_id = $3), false) AS access_held
         FROM gateway.call k WHERE k.intent_id = $1`,
      [intentId, credentialId, mcpUrlId]);
    return row;
  },
};
