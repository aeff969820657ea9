import { type EntityManager } from 'typeorm';
import { col, defineTable, select } from '@tollgate/persistence';
import { type SettledCall } from './usage-events';

type Payload = Record<string, unknown>;
const SETTLED_ROW = defineTable('(settled call)', {
  intent_id: col.uuid().required(), occurred_at: col.timestamptz().required(),
  settled: col.jsonb<Payload>().required(), requested: col.jsonb<Payload>().nullable(), held: col.jsonb<Payload>().nullable(),
});
type SettledRow = { intent_id: string; occurred_at: Date; settled: Payload; requested: Payload | null; held: Payload | null };

const str = (v: unknown) => (typeof v === 'string' ? v : null);

function callOf(r: SettledRow): SettledCall {
  const s = r.settled as { providerId: string; amount: { amountMinor: string; asset: string }; ownerId?: string; usage?: SettledCall['usage'] };
  const held = r.held ?? {};
  return {
    intentId: r.intent_id, settledAt: r.occurred_at, ownerId: s.ownerId ?? str(r.requested?.['ownerId']), agentId: str(r.requested?.['agentId']),
    toolName: str(r.requested?.['toolName']), operationKey: str(r.requested?.['operationKey']), providerId: s.providerId, charge: s.amount, usage: s.usage ?? null,
    rail: held['x402PaymentResponse'] ? 'x402' : held['mppReceipt'] ? 'mpp' : held['free'] ? 'free' : 'wallet',
  };
}

type Executor = Pick<EntityManager, 'query'>;

/** The settled calls of a period, from the ledger's timeline, in settlement order (a page at a time). */
export const SettledCalls = {
  async *inPeriod(m: Executor, from: Date, to: Date, ownerId?: string, pageSize = 1000): AsyncGenerator<SettledCall> {
    let after: [Date, string] | undefined;
    for (;;) {
      const rows = await select(m, SETTLED_ROW, ['intent_id', 'occurred_at', 'settled', 'requested', 'held'],
        `SELECT s.intent_id, s.occurred_at, s.payload AS settled, r.payload AS requested, h.payload AS held
           FROM ledger.timeline_entry s
           LEFT JOIN LATERAL (SELECT t.payload FROM ledger.timeline_entry t WHERE t.intent_id = s.intent_id AND t.type = 'CallRequested' LIMIT 1) r ON TRUE
           LEFT JOIN LATERAL (SELECT t.payload FROM ledger.timeline_entry t WHERE t.intent_id = s.intent_id AND t.type = 'PaymentHeld' LIMIT 1) h ON TRUE
          WHERE s.type = 'CallSettled' AND s.occurred_at >= $1 AND s.occurred_at < $2 AND ($3::text IS NULL OR s.payload->>'ownerId' = $3)
            AND ($4::timestamptz IS NULL OR (s.occurred_at, s.intent_id) > ($4, $5::uuid))
          ORDER BY s.occurred_at, s.intent_id LIMIT $6`,
        [from, to, ownerId ?? null, after?.[0] ?? null, after?.[1] ?? null, pageSize]);
      for (const r of rows) yield callOf(r as SettledRow);
      if (rows.length < pageSize) return;
      const last = rows[rows.length - 1]!;
      after = [last.occurred_at, last.intent_id];
    }
  },
};
