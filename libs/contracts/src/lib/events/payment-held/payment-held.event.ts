import { Type } from 'class-transformer';
import { IsString, IsUUID, MinLength, ValidateNested } from 'class-validator';
import { defineEvent } from '../../event-definition';
import { MoneyDto } from '../../money';
import { Topics } from '../../topics';

/** Payment placed a pending (two-phase) hold for the call's price. */
export class PaymentHeldPayload {
  @IsUUID() intentId!: string;
  @IsUUID() holdId!: string;
  @IsString() @MinLength(1) ownerId!: string;
  @ValidateNested() @Type(() => MoneyDto) amount!: MoneyDto;
}

export const PaymentHeld = defineEvent({
  type: 'PaymentHeld',
  version: 1,
  topic: Topics.paymentHeld,
  payload: PaymentHeldPayload,
  keyOf: (p) => p.intentId,
});
