import { Type } from 'class-transformer';
import { IsISO8601, IsString, IsUUID, MinLength, ValidateNested } from 'class-validator';
import { defineEvent } from '../../event-definition';
import { MoneyDto } from '../../money';
import { Topics } from '../../topics';

/** Settlement paid a provider the net of one statement period out of its payable balance. */
export class PayoutIssuedPayload {
  @IsUUID() payoutId!: string;
  @IsString() @MinLength(1) providerId!: string;
  @IsISO8601({ strict: true }) periodStart!: string;
  @IsISO8601({ strict: true }) periodEnd!: string;
  @ValidateNested() @Type(() => MoneyDto) amount!: MoneyDto;
}

export const PayoutIssued = defineEvent({
  type: 'PayoutIssued',
  version: 1,
  topic: Topics.payoutIssued,
  payload: PayoutIssuedPayload,
  keyOf: (p) => p.providerId,
});
