import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type CallRequestedPayload, money, PaymentHeld, PaymentRejected, toMinor } from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { PAYMENT_OUTBOX } from '../payment.constants';

/**
 * On CallRequested: place a pending hold for the call's price, or reject.
 * Wallets and spend policy arrive with the payment issue; until then every
 * owner's prepaid balance is zero, so only free calls are held.
 */
@Injectable()
export class PlaceHoldUseCase {
  constructor(@Inject(PAYMENT_OUTBOX) private readonly outbox: OutboxWriter) {}

  async execute(manager: EntityManager, request: CallRequestedPayload, causationId: string): Promise<void> {
    const price = toMinor(request.price);
    const availableBalance = 0n;
    if (price > availableBalance) {
      await manager.query('INSERT INTO payment.rejection (intent_id, code) VALUES ($1, $2)', [request.intentId, 'PAYMENT_INSUFFICIENT_FUNDS']);
      await this.outbox.append(manager, PaymentRejected, {
        intentId: request.intentId,
        code: 'PAYMENT_INSUFFICIENT_FUNDS',
        message: 'The prepaid balance does not cover this call.',
        retryable: false,
      }, { causationId });
      return;
    }
    const holdId = randomUUID();
    await manager.query(
      'INSERT INTO payment.hold (hold_id, intent_id, owner_id, amount_minor, asset) VALUES ($1, $2, $3, $4, $5)',
      [holdId, request.intentId, request.ownerId, price.toString(), request.price.asset],
    );
    await this.outbox.append(manager, PaymentHeld, {
      intentId: request.intentId,
      holdId,
      ownerId: request.ownerId,
      amount: money(price, request.price.asset),
    }, { causationId });
  }
}
