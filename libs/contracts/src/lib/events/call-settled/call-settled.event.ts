import { Type } from 'class-transformer';
import { IsOptional, IsString, IsUUID, MinLength, ValidateNested } from 'class-validator';
import { defineEvent } from '../../event-definition';
import { MoneyDto } from '../../money';
import { Topics } from '../../topics';

/** The verification window closed; the hold was captured for the provider. */
export class CallSettledPayload {
  @IsUUID() intentId!: string;
  @IsUUID() holdId!: string;
  @IsString() @MinLength(1) providerId!: string;
  @ValidateNested() @Type(() => MoneyDto) amount!: MoneyDto;
  /** Additive: whose hold was captured, and how the captured amount splits (fee + providerNet = amount). */
  @IsOptional() @IsString() @MinLength(1) ownerId?: string;
  @IsOptional() @ValidateNested() @Type(() => MoneyDto) fee?: MoneyDto;
  @IsOptional() @ValidateNested() @Type(() => MoneyDto) providerNet?: MoneyDto;
}

export const CallSettled = defineEvent({
  type: 'CallSettled',
  version: 1,
  topic: Topics.callSettled,
  payload: CallSettledPayload,
  keyOf: (p) => p.intentId,
});
