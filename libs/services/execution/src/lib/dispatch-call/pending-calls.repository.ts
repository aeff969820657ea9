import { type EntityManager } from 'typeorm';
import { col, defineTable, lockCallRows, type RowOf, select } from '@tollgate/persistence';
import { awaitingVerdict, type CallState, inFlightAttempt } from '@tollgate/call-life';
import { type CatalogToolChangedPayload, type ToolBindingDto } from '@tollgate/contracts';
import { type ReadBackSpec } from './call-policy';

/**
 * `execution.pending_call`: one row per call execution has heard of — its life (call-life state), the request's
 * arguments, and the columns its queries read, each derived from the state on save.
 */
export const PENDING_CALL = defineTable('execution.pending_call', {
  intent_id: col.uuid().required(),
  life: col.jsonb<CallState>().required(),
  tool_id: col.text().nullable(),
  arguments: col.jsonb<Record<string, unknown>>().nullable(),
  operation_key: col.text().nullable(),
  deadline_at: col.timestamptz().nullable(),
  owner_id: col.text().nullable(),
  agent_id: col.text().nullable(),
  mcp_url_id: col.text().nullable(),
  hold_id: col.uuid().nullable(),
  /** The model's `inFlightAttempt` (what the stall sweep queries). */
  in_flight_attempt: col.integer().nullable(),
  /** The model's `awaitingVerdict` (what the reconciler queries). */
  reconciling_attempt: col.integer().nullable(),
  updated_at: col.timestamptz().required(),
});
export type PendingCallRow = RowOf<typeof PENDING_CALL>;

/** `execution.tool_binding`: the catalog's bindings of a tool, as execution needs them to dispatch. */
export const TOOL_BINDING = defineTable('execution.tool_binding', {
  tool_id: col.text().required(),
  name: col.text().required(),
  version: col.integer().required(),
  bindings: col.jsonb<ToolBindingDto[]>().required(),
  annotations: col.jsonb<Record<string, unknown>>().nullable(),
  output_schema: col.jsonb<Record<string, unknown>>().nullable(),
  kind: col.text<'read' | 'write'>().nullable(),
  read_back: col.jsonb<ReadBackSpec>().nullable(),
  status: col.text().required(),
});
export type ToolBindingRow = Pick<RowOf<typeof TOOL_BINDING>, 'tool_id' | 'bindings' | 'output_schema' | 'kind' | 'read_back' | 'status'>;

export type LoadedPendingCall = Pick<PendingCallRow, 'intent_id' | 'life' | 'arguments'>;

/** A saved state; `arguments` when the request arrived in this batch. */
export interface PendingCallChange {
  life: CallState;
  arguments?: Record<string, unknown>;
}

type Executor = Pick<EntityManager, 'query'>;

export const PendingCalls = {
  /** The states of these calls, locked; a call not seen yet gets its row first (`lockCallRows`). */
  lockLives(m: Executor, intentIds: readonly string[]): Promise<Map<string, LoadedPendingCall>> {
    return lockCallRows(m, PENDING_CALL, ['intent_id', 'life', 'arguments'], intentIds);
  },

  /** One call's state as it is now (unlocked), or undefined when execution never heard of it. */
  async lifeOf(m: Executor, intentId: string): Promise<CallState | undefined> {
    const [row] = await select(m, PENDING_CALL, ['life'], 'SELECT life FROM execution.pending_call WHERE intent_id = $1', [intentId]);
    return row?.life;
  },

  /** These tools' bindings: the active ones (to dispatch), or whatever their status (to reconcile a call made earlier). */
  async toolsOf(m: Executor, toolIds: readonly string[], which: 'active' | 'any' = 'active'): Promise<Map<string, ToolBindingRow>> {
    if (toolIds.length === 0) return new Map();
    const rows = await select(m, TOOL_BINDING, ['tool_id', 'bindings', 'output_schema', 'kind', 'read_back', 'status'],
      `SELECT tool_id, bindings, output_schema, kind, read_back, status FROM execution.tool_binding WHERE tool_id = ANY($1) AND ($2 = 'any' OR status = 'active')`, [toolIds, which]);
    return new Map(rows.map((r) => [r.tool_id, r]));
  },

  /** Execution's copy of a tool from the catalog (CatalogToolChanged): inserted, or replaced whole. */
  async saveTool(m: Executor, tool: CatalogToolChangedPayload): Promise<void> {
    await m.query(
      `INSERT INTO execution.tool_binding (tool_id, name, version, status, bindings, output_schema, annotations, kind, read_back)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (tool_id) DO UPDATE SET name = EXCLUDED.name, version = EXCLUDED.version, status = EXCLUDED.status,
         bindings = EXCLUDED.bindings, output_schema = EXCLUDED.output_schema, annotations = EXCLUDED.annotations,
         kind = EXCLUDED.kind, read_back = EXCLUDED.read_back`,
      [tool.toolId, tool.name, tool.version, tool.status, JSON.stringify(tool.bindings), tool.outputSchema ? JSON.stringify(tool.outputSchema) : null,
        tool.annotations ? JSON.stringify(tool.annotations) : null, tool.kind, tool.readBack ? JSON.stringify(tool.readBack) : null],
    );
  },

  /** One tool's bindings and status as they are now (R7: checked again right before each attempt's I/O). */
  async bindingsOf(m: Executor, toolId: string): Promise<Pick<ToolBindingRow, 'bindings' | 'status'> | undefined> {
    const [t] = await select(m, TOOL_BINDING, ['bindings', 'status'], 'SELECT bindings, status FROM execution.tool_binding WHERE tool_id = $1', [toolId]);
    return t;
  },

  /** Saves every changed call (locked by `lockLives`) in one statement; the request's columns come from the state. */
  async saveLives(m: Executor, changes: readonly PendingCallChange[]): Promise<void> {
    if (changes.length === 0) return;
    const req = (c: PendingCallChange) => c.life.request;
    await m.query(
      `UPDATE execution.pending_call p SET life = x.life, tool_id = x.tool_id, arguments = COALESCE(x.arguments, p.arguments), operation_key = x.operation_key,
              deadline_at = x.deadline_at, owner_id = x.owner_id, agent_id = x.agent_id, mcp_url_id = x.mcp_url_id, hold_id = x.hold_id,
              in_flight_attempt = x.in_flight, reconciling_attempt = x.reconciling, updated_at = now()
         FROM unnest($1::uuid[], $2::jsonb[], $3::text[], $4::jsonb[], $5::text[], $6::timestamptz[], $7::text[], $8::text[], $9::text[], $10::uuid[], $11::int[], $12::int[])
           AS x(intent_id, life, tool_id, arguments, operation_key, deadline_at, owner_id, agent_id, mcp_url_id, hold_id, in_flight, reconciling)
        WHERE p.intent_id = x.intent_id`,
      [changes.map((c) => c.life.intentId), changes.map((c) => JSON.stringify(c.life)), changes.map((c) => req(c)?.toolId ?? null),
        changes.map((c) => (c.arguments ? JSON.stringify(c.arguments) : null)), changes.map((c) => req(c)?.operationKey ?? null),
        changes.map((c) => req(c)?.deadlineAt ?? null), changes.map((c) => req(c)?.ownerId ?? null), changes.map((c) => req(c)?.agentId ?? null),
        changes.map((c) => req(c)?.mcpUrlId ?? null), changes.map((c) => c.life.held?.holdId ?? null),
        changes.map((c) => inFlightAttempt(c.life) ?? null), changes.map((c) => awaitingVerdict(c.life) ?? null)],
    );
  },
};
