import { Type } from 'class-transformer';
import { IsOptional, IsString, IsUUID, MinLength, ValidateNested } from 'class-validator';
import { defineEvent } from '../../event-definition';
import { SettledUsageDto } from '../../metered-price';
import { MoneyDto } from '../../money';
import { Topics } from '../../topics';

/** The verification window closed; the hold was captured for the provider (a metered call's charge; the rest released). */
export class CallSettledPayload {
  @IsUUID() intentId!: string;
  @IsUUID() holdId!: string;
  @IsString() @MinLength(1) providerId!: string;
  @ValidateNested() @Type(() => MoneyDto) amount!: MoneyDto;
  /** Additive: whose hold was captured, and how the captured amount splits (fee + providerNet = amount). */
  @IsOptional() @IsString() @MinLength(1) ownerId?: string;
  @IsOptional() @ValidateNested() @Type(() => MoneyDto) fee?: MoneyDto;
  @IsOptional() @ValidateNested() @Type(() => MoneyDto) providerNet?: MoneyDto;
  /** Additive: a metered call — `amount` is the charge (≤ the hold; payment gives the rest back) and how it was computed. */
  @IsOptional() @ValidateNested() @Type(() => SettledUsageDto) usage?: SettledUsageDto;
}

export const CallSettled = defineEvent({
  type: 'CallSettled',
  version: 1,
  topic: Topics.callSettled,
  payload: CallSettledPayload,
  keyOf: (p) => p.intentId,
});
