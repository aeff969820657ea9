import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';

/** On CallSettled / CallRefunded: the pending hold is posted or voided, exactly once. */
@Injectable()
export class ResolveHoldUseCase {
  async execute(manager: EntityManager, holdId: string, outcome: 'posted' | 'voided'): Promise<void> {
    await manager.query(
      `UPDATE payment.hold SET status = $2, resolved_at = now() WHERE hold_id = $1 AND status = 'pending'`,
      [holdId, outcome],
    );
  }
}
