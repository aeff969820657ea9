import { Inject, Injectable, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { deleteInBatches, type Queryable, scheduleRetention } from '@tollgate/messaging';
import { createLogger } from '@tollgate/observability';
import { GATEWAY, GATEWAY_OPTIONS } from '../gateway.constants';
import { type GatewayOptions } from '../gateway.options';
import { ANSWER_RETENTION_MS } from '@tollgate/call-life';

/** Ended sign-ins are kept a day for support questions, then purged. */
export const SIGN_IN_KEEP_MS = 86_400_000;

/**
 * The gateway's retention, enforcing what the docs promise:
 * - a call's replayable answer (result, x402 receipt) is erased 7 days after the call; the operation key and the call
 *   row stay, so a repeat answers IDEMPOTENCY_RESULT_UNAVAILABLE and never buys the work again;
 * - device sign-ins and OAuth authorization requests a day past their expiry are deleted, and so are OAuth access
 *   tokens a day past theirs (a refresh issues new ones; the grant stays until revoked) and dynamic client
 *   registrations a day old that never completed a sign-in;
 * - rate-limit counters past their window are deleted.
 * Nothing here is an event: the ledger's timelines and the event log are untouched.
 */
export async function pruneGateway(db: Queryable, now = Date.now()): Promise<{ answers: number; signIns: number; oauth: number; rateLimits: number }> {
  const answers = await deleteInBatches(db,
    `UPDATE gateway.call SET result = NULL, life = life #- '{held,x402PaymentResponse}', answer_expired_at = now()
      WHERE intent_id IN (SELECT intent_id FROM gateway.call WHERE answer_expired_at IS NULL AND created_at < $1 LIMIT $2)`,
    [new Date(now - ANSWER_RETENTION_MS)]);
  const signIns = await deleteInBatches(db,
    'DELETE FROM gateway.device_sign_in WHERE request_id IN (SELECT request_id FROM gateway.device_sign_in WHERE expires_at < $1 LIMIT $2)',
    [new Date(now - SIGN_IN_KEEP_MS)]);
  const ended = new Date(now - SIGN_IN_KEEP_MS);
  const oauth = await deleteInBatches(db,
    'DELETE FROM gateway.oauth_request WHERE request_id IN (SELECT request_id FROM gateway.oauth_request WHERE expires_at < $1 LIMIT $2)', [ended])
    + await deleteInBatches(db,
      'DELETE FROM gateway.credential WHERE credential_id IN (SELECT credential_id FROM gateway.credential WHERE grant_id IS NOT NULL AND expires_at < $1 LIMIT $2)', [ended])
    // A registration that never completed a sign-in (no grant) is gone a day later: registering costs an attacker nothing.
    + await deleteInBatches(db,
      `DELETE FROM gateway.oauth_client WHERE client_id IN (SELECT c.client_id FROM gateway.oauth_client c WHERE c.created_at < $1
          AND NOT EXISTS (SELECT 1 FROM gateway.oauth_grant g WHERE g.client_id = c.client_id) LIMIT $2)`, [ended]);
  const rateLimits = await deleteInBatches(db,
    'DELETE FROM gateway.rate_limit WHERE key IN (SELECT key FROM gateway.rate_limit WHERE expire < $1 LIMIT $2)',
    [now]);
  return { answers, signIns, oauth, rateLimits };
}

@Injectable()
export class GatewayRetentionJob implements OnApplicationBootstrap, OnModuleDestroy {
  private schedule?: { stop(): void };

  constructor(
    @InjectDataSource(GATEWAY) private readonly dataSource: DataSource,
    @Inject(GATEWAY_OPTIONS) private readonly options: GatewayOptions,
  ) {}

  onApplicationBootstrap(): void {
    this.schedule = scheduleRetention('gateway', this.options.retentionIntervalMs ?? 3_600_000, () => pruneGateway(this.dataSource), createLogger('gateway'));
  }

  onModuleDestroy(): void {
    this.schedule?.stop();
  }
}
