import { type EntityManager } from 'typeorm';
import { col, defineTable, type RowOf, select } from '@tollgate/persistence';

/** `ledger.timeline_entry`: one row per event of a call, its payload kept whole (the projection writes it). */
export const TIMELINE_ENTRY = defineTable('ledger.timeline_entry', {
  event_id: col.uuid().required(),
  intent_id: col.uuid().required(),
  type: col.text().required(),
  producer: col.text().required(),
  topic: col.text().required(),
  occurred_at: col.timestamptz().required(),
  recorded_at: col.timestamptz().required(),
  payload: col.jsonb<Record<string, unknown>>().required(),
});
/** A timeline entry as the call views read it. */
export type TimelineEntryRow = Pick<RowOf<typeof TIMELINE_ENTRY>, 'event_id' | 'type' | 'producer' | 'occurred_at' | 'recorded_at' | 'payload'>;

/** The request of a call, by its operation key (the columns the statement names). */
const KEYED = defineTable('(keyed call)', {
  intent_id: col.uuid().required(), owner_id: col.text().nullable(), agent_id: col.text().nullable(), tool_name: col.text().nullable(), requested_at: col.timestamptz().required(),
});

/** A call an operation key named. */
export interface KeyedCall { intentId: string; ownerId: string; agentId: string; toolName: string; requestedAt: string }

type Executor = Pick<EntityManager, 'query'>;

const PENDING = defineTable('(call the gateway recorded)', { owner_id: col.text().required() });

/** The reads of the call views (`/calls/:intentId`, ops `inspect`); the projection writes the table. */
export const TimelineEntries = {
  /**
   * The owner of a call the gateway recorded (its CallRequested committed) but the ledger has not projected yet, read
   * from the gateway's schema in the one database; undefined when the gateway does not know it (or its schema is not here).
   */
  async ownerOfPendingCall(db: Executor, intentId: string): Promise<string | undefined> {
    const [gateway] = await db.query(`SELECT to_regclass('gateway.call') IS NOT NULL AS present`) as { present: boolean }[];
    if (!gateway?.present) return undefined;
    return (await select(db, PENDING, ['owner_id'],
      'SELECT a.owner_id::text AS owner_id FROM gateway.call c JOIN gateway.agent a USING (agent_id) WHERE c.intent_id = $1', [intentId]))[0]?.owner_id;
  },

  /** Every event of a call, in the order it happened. */
  async ofCall(db: Executor, intentId: string): Promise<TimelineEntryRow[]> {
    return select(db, TIMELINE_ENTRY, ['event_id', 'type', 'producer', 'occurred_at', 'recorded_at', 'payload'],
      'SELECT event_id, type, producer, occurred_at, recorded_at, payload FROM ledger.timeline_entry WHERE intent_id = $1 ORDER BY occurred_at, recorded_at', [intentId]);
  },

  /** The calls requested under an operation key (keys are per agent, so several agents' calls may share one), at most 100. */
  async callsByOperationKey(db: Executor, operationKey: string): Promise<KeyedCall[]> {
    const rows = await select(db, KEYED, ['intent_id', 'owner_id', 'agent_id', 'tool_name', 'requested_at'],
      `SELECT intent_id, payload->>'ownerId' AS owner_id, payload->>'agentId' AS agent_id, payload->>'toolName' AS tool_name, occurred_at AS requested_at
         FROM ledger.timeline_entry WHERE type = 'CallRequested' AND payload->>'operationKey' = $1 ORDER BY occurred_at LIMIT 100`, [operationKey]);
    return rows.map((r) => ({ intentId: r.intent_id, ownerId: r.owner_id ?? '', agentId: r.agent_id ?? '', toolName: r.tool_name ?? '', requestedAt: r.requested_at.toISOString() }));
  },
};
