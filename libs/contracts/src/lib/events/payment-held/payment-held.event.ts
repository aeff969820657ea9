import { Type } from 'class-transformer';
import { IsBoolean, IsObject, IsOptional, IsString, IsUUID, MinLength, ValidateNested } from 'class-validator';
import { defineEvent } from '../../event-definition';
import { MeteredPriceDto } from '../../metered-price';
import { MoneyDto } from '../../money';
import { Topics } from '../../topics';

/** Payment placed a pending (two-phase) hold for the call's price. */
export class PaymentHeldPayload {
  @IsUUID() intentId!: string;
  @IsUUID() holdId!: string;
  @IsString() @MinLength(1) ownerId!: string;
  @ValidateNested() @Type(() => MoneyDto) amount!: MoneyDto;
  /** Additive: the call is one of the tool's daily free calls (nothing held). */
  @IsOptional() @IsBoolean() free?: boolean;
  /** Additive: the x402 payment that funded this hold was verified and settled (the agent's `x402/payment-response`). */
  @IsOptional() @IsObject() x402PaymentResponse?: Record<string, unknown>;
  /** Additive: the MPP payment that funded this hold (its receipt, the agent's `org.paymentauth/receipt`). */
  @IsOptional() @IsObject() mppReceipt?: Record<string, unknown>;
  /** Additive: the call is priced by use — `amount` is its maximum; settlement charges by the confirmed usage. */
  @IsOptional() @ValidateNested() @Type(() => MeteredPriceDto) metered?: MeteredPriceDto;
}

export const PaymentHeld = defineEvent({
  type: 'PaymentHeld',
  version: 1,
  topic: Topics.paymentHeld,
  payload: PaymentHeldPayload,
  keyOf: (p) => p.intentId,
});
