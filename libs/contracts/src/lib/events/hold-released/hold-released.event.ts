import { Type } from 'class-transformer';
import { IsIn, IsString, IsUUID, MinLength, ValidateNested } from 'class-validator';
import { defineEvent } from '../../event-definition';
import { MoneyDto } from '../../money';
import { Topics } from '../../topics';

/**
 * Payment resolved a hold, once: captured (held → clearing, the rest released)
 * or voided (all released). Released money repays a debt first; the event
 * carries exactly what payment booked, so the ledger books the same.
 */
export class HoldReleasedPayload {
  @IsUUID() intentId!: string;
  @IsUUID() holdId!: string;
  @IsString() @MinLength(1) ownerId!: string;
  @IsIn(['captured', 'voided']) outcome!: 'captured' | 'voided';
  @ValidateNested() @Type(() => MoneyDto) held!: MoneyDto;
  /** Zero for a void. */
  @ValidateNested() @Type(() => MoneyDto) captured!: MoneyDto;
  /** The part of the released money that went to the owner's debt rather than its available balance. */
  @ValidateNested() @Type(() => MoneyDto) repaidDebt!: MoneyDto;
}

export const HoldReleased = defineEvent({
  type: 'HoldReleased',
  version: 1,
  topic: Topics.holdReleased,
  payload: HoldReleasedPayload,
  keyOf: (p) => p.intentId,
});
