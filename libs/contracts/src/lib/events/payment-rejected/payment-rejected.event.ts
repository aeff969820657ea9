import { IsBoolean, IsInt, IsObject, IsOptional, IsString, IsUUID, Matches, MaxLength, Min, MinLength } from 'class-validator';
import { defineEvent } from '../../event-definition';
import { Topics } from '../../topics';

/** Payment refused the call; nothing is held and the call is not dispatched. */
export class PaymentRejectedPayload {
  @IsUUID() intentId!: string;
  /** One of the spec's error codes, e.g. PAYMENT_INSUFFICIENT_FUNDS. */
  @Matches(/^[A-Z][A-Z0-9_]+$/) code!: string;
  @IsString() @MinLength(1) @MaxLength(500) message!: string;
  @IsBoolean() retryable!: boolean;
  /** Additive (optional) next-step fields of the agent error (G7): how long to wait, and structured details. */
  @IsOptional() @IsInt() @Min(0) retryAfterMs?: number;
  @IsOptional() @IsObject() details?: Record<string, unknown>;
  /** PAYMENT_REQUIRED: the x402 (version 2) payment requirement the agent can sign. */
  @IsOptional() @IsObject() x402PaymentRequired?: Record<string, unknown>;
  /** PAYMENT_REQUIRED: MPP's payment-required data (`{ httpStatus: 402, challenges, problem? }`) the agent can pay. */
  @IsOptional() @IsObject() mppPaymentRequired?: Record<string, unknown>;
  /**
   * The refusal stands for this call's operation key: a retry with the same key gets this answer again instead of
   * running the call (set when payment could not process the call at all and parked its CallRequested).
   */
  @IsOptional() @IsBoolean() final?: boolean;
}

export const PaymentRejected = defineEvent({
  type: 'PaymentRejected',
  version: 1,
  topic: Topics.paymentRejected,
  payload: PaymentRejectedPayload,
  keyOf: (p) => p.intentId,
});
