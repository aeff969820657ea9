import { Type } from 'class-transformer';
import { IsOptional, IsString, IsUUID, MaxLength, MinLength, ValidateNested } from 'class-validator';
import { defineEvent } from '../../event-definition';
import { MoneyDto } from '../../money';
import { Topics } from '../../topics';

/** The hold was voided and the agent's owner keeps the money. */
export class CallRefundedPayload {
  @IsUUID() intentId!: string;
  @IsUUID() holdId!: string;
  @ValidateNested() @Type(() => MoneyDto) amount!: MoneyDto;
  @IsString() @MinLength(1) @MaxLength(500) reason!: string;
  /** Additive: whose hold was released. */
  @IsOptional() @IsString() @MinLength(1) ownerId?: string;
}

export const CallRefunded = defineEvent({
  type: 'CallRefunded',
  version: 1,
  topic: Topics.callRefunded,
  payload: CallRefundedPayload,
  keyOf: (p) => p.intentId,
});
