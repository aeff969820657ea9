import { IsBoolean, IsString, IsUUID, Matches, MaxLength, MinLength } from 'class-validator';
import { defineEvent } from '../../event-definition';
import { Topics } from '../../topics';

/** Payment refused the call; nothing is held and the call is not dispatched. */
export class PaymentRejectedPayload {
  @IsUUID() intentId!: string;
  /** One of the spec's error codes, e.g. PAYMENT_INSUFFICIENT_FUNDS. */
  @Matches(/^[A-Z][A-Z0-9_]+$/) code!: string;
  @IsString() @MinLength(1) @MaxLength(500) message!: string;
  @IsBoolean() retryable!: boolean;
}

export const PaymentRejected = defineEvent({
  type: 'PaymentRejected',
  version: 1,
  topic: Topics.paymentRejected,
  payload: PaymentRejectedPayload,
  keyOf: (p) => p.intentId,
});
