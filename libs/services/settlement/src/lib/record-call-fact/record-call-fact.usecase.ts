import { Inject, Injectable } from '@nestjs/common';
import { traceHeaders } from '@tollgate/observability';
import { type EntityManager } from 'typeorm';
import { CallRefunded, money } from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { returnedRows } from '@tollgate/persistence';
import { SETTLEMENT_OPTIONS, SETTLEMENT_OUTBOX } from '../settlement.constants';
import { type SettlementOptions } from '../settlement.options';

export type CallFact =
  | { kind: 'held'; holdId: string; ownerId: string; amountMinor: string; asset: string }
  | { kind: 'dispatched'; providerId: string }
  | { kind: 'confirmed'; providerId?: string }
  | { kind: 'rejected'; reason: string };

/**
 * Records one fact about a call. A confirmed effect opens the verification
 * window (closed later by CloseVerificationUseCase); a rejected effect is
 * refunded as soon as the hold is known.
 */
@Injectable()
export class RecordCallFactUseCase {
  constructor(
    @Inject(SETTLEMENT_OUTBOX) private readonly outbox: OutboxWriter,
    @Inject(SETTLEMENT_OPTIONS) private readonly options: SettlementOptions,
  ) {}

  async execute(manager: EntityManager, intentId: string, fact: CallFact, causationId: string): Promise<void> {
    await manager.query('INSERT INTO settlement.verification (intent_id) VALUES ($1) ON CONFLICT DO NOTHING', [intentId]);
    switch (fact.kind) {
      case 'held':
        await manager.query('UPDATE settlement.verification SET hold_id = $2, amount_minor = $3, asset = $4, owner_id = $5 WHERE intent_id = $1', [intentId, fact.holdId, fact.amountMinor, fact.asset, fact.ownerId]);
        break;
      case 'dispatched':
        // The provider of the latest attempt, until the confirmed effect names the one that served it (issue 12).
        await manager.query('UPDATE settlement.verification SET provider_id = $2 WHERE intent_id = $1 AND (effect IS NULL OR provider_id IS NULL)', [intentId, fact.providerId]);
        break;
      case 'confirmed':
        await manager.query(
          `UPDATE settlement.verification SET effect = 'confirmed', due_at = now() + ($2::int * interval '1 millisecond'), provider_id = COALESCE($3, provider_id),
                  trace_headers = $4
            WHERE intent_id = $1 AND effect IS NULL`,
          [intentId, this.options.verificationWindowMs, fact.providerId ?? null, traceHeadersOrNull()],
        );
        break;
      case 'rejected':
        await manager.query(`UPDATE settlement.verification SET effect = 'rejected', reason = $2 WHERE intent_id = $1 AND effect IS NULL`, [intentId, fact.reason]);
        break;
    }
    await this.refundIfRejected(manager, intentId, causationId);
  }

  private async refundIfRejected(manager: EntityManager, intentId: string, causationId: string): Promise<void> {
    const rows = returnedRows<{ hold_id: string; amount_minor: string; asset: string; reason: string; owner_id: string | null }>(await manager.query(
      `UPDATE settlement.verification SET state = 'refunded', closed_at = now()
        WHERE intent_id = $1 AND state = 'open' AND effect = 'rejected' AND hold_id IS NOT NULL
        RETURNING hold_id, amount_minor, asset, reason, owner_id`,
      [intentId],
    ));
    for (const r of rows) {
      await this.outbox.append(manager, CallRefunded, {
        intentId, holdId: r.hold_id, amount: money(BigInt(r.amount_minor), r.asset), reason: r.reason, ...(r.owner_id ? { ownerId: r.owner_id } : {}),
      }, { causationId });
    }
  }
}

/** The confirmed effect's trace context (null when tracing is off), for the sweeper that settles the call later. */
function traceHeadersOrNull(): string | null {
  const headers = traceHeaders();
  return Object.keys(headers).length > 0 ? JSON.stringify(headers) : null;
}
