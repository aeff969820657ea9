import { type EntityManager } from 'typeorm';

/** `ledger.timeline_entry` as the call views read it: one row per event of a call, its payload kept whole. */
export interface TimelineEntryRow {
  event_id: string; type: string; producer: string; occurred_at: Date; recorded_at: Date; payload: Record<string, unknown>;
}

/** A call an operation key named. */
export interface KeyedCall { intentId: string; ownerId: string; agentId: string; toolName: string; requestedAt: string }

type Executor = Pick<EntityManager, 'query'>;

/** The reads of the call views (`/calls/:intentId`, ops `inspect`); the projection writes the table. */
export const TimelineEntries = {
  /** Every event of a call, in the order it happened. */
  async ofCall(db: Executor, intentId: string): Promise<TimelineEntryRow[]> {
    return (await db.query(
      'SELECT event_id, type, producer, occurred_at, recorded_at, payload FROM ledger.timeline_entry WHERE intent_id = $1 ORDER BY occurred_at, recorded_at',
      [intentId])) as TimelineEntryRow[];
  },

  /** The calls requested under an operation key (keys are per agent, so several agents' calls may share one), at most 100. */
  async callsByOperationKey(db: Executor, operationKey: string): Promise<KeyedCall[]> {
    return (await db.query(
      `SELECT intent_id AS "intentId", payload->>'ownerId' AS "ownerId", payload->>'agentId' AS "agentId", payload->>'toolName' AS "toolName", occurred_at AS "requestedAt"
         FROM ledger.timeline_entry WHERE type = 'CallRequested' AND payload->>'operationKey' = $1 ORDER BY occurred_at LIMIT 100`, [operationKey])) as KeyedCall[];
  },
};
