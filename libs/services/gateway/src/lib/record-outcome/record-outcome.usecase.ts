import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type UpstreamResultDto } from '@tollgate/contracts';

export type CallOutcomeFact =
  | { kind: 'dispatched'; providerId: string; attempt: number }
  | { kind: 'result'; providerId: string; attempt: number; classification: string; result: UpstreamResultDto }
  | { kind: 'confirmed'; attempt: number }
  | { kind: 'held'; amountMinor: string; x402Response?: Record<string, unknown> }
  | { kind: 'failed'; code: string; message: string; retryable: boolean; stage?: 'payment'; final?: boolean; retryAfterMs?: number; details?: Record<string, unknown>; x402PaymentRequired?: Record<string, unknown> }
  /** A capture names its amount: the receipt stays right even when the hold's event is recorded after it. */
  | { kind: 'settled'; amountMinor: string }
  | { kind: 'refunded' };

/** Folds the other services' events about a call into the gateway's call row. */
@Injectable()
export class RecordOutcomeUseCase {
  async execute(manager: EntityManager, intentId: string, fact: CallOutcomeFact): Promise<void> {
    switch (fact.kind) {
      case 'dispatched':
        await manager.query('UPDATE gateway.call SET provider_id = $2, attempts = GREATEST(attempts, $3), updated_at = now() WHERE intent_id = $1', [intentId, fact.providerId, fact.attempt]);
        return;
      case 'result':
        await manager.query(
          // A later attempt's result replaces an earlier one's (fallback); never the other way round.
          `UPDATE gateway.call SET provider_id = $2, attempts = GREATEST(attempts, $3), classification = $4, result = $5, result_attempt = $3, updated_at = now()
            WHERE intent_id = $1 AND COALESCE(result_attempt, 0) <= $3`,
          [intentId, fact.providerId, fact.attempt, fact.classification, JSON.stringify(fact.result)],
        );
        return;
      case 'confirmed':
        await manager.query(`UPDATE gateway.call SET effect = 'confirmed', effect_attempt = $2, updated_at = now() WHERE intent_id = $1`, [intentId, fact.attempt]);
        return;
      case 'held':
        await manager.query('UPDATE gateway.call SET held_minor = $2, x402_response = $3, updated_at = now() WHERE intent_id = $1', [intentId, fact.amountMinor, fact.x402Response ? JSON.stringify(fact.x402Response) : null]);
        return;
      case 'failed': {
        const { kind: _kind, ...error } = fact;
        await manager.query(
          // An unknown outcome is provisional: the reconciled verdict replaces it.
          `UPDATE gateway.call SET error = $2, updated_at = now() WHERE intent_id = $1 AND (error IS NULL OR error->>'code' = 'IDEMPOTENCY_RESULT_UNAVAILABLE')`,
          [intentId, JSON.stringify(error)],
        );
        return;
      }
      case 'settled':
        await manager.query(`UPDATE gateway.call SET settlement = 'settled', held_minor = COALESCE(held_minor, $2), updated_at = now() WHERE intent_id = $1`, [intentId, fact.amountMinor]);
        return;
      default:
        await manager.query('UPDATE gateway.call SET settlement = $2, updated_at = now() WHERE intent_id = $1', [intentId, fact.kind]);
    }
  }
}
