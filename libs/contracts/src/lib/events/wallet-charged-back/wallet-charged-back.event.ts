import { Type } from 'class-transformer';
import { IsString, MaxLength, MinLength, ValidateNested } from 'class-validator';
import { defineEvent } from '../../event-definition';
import { MoneyDto } from '../../money';
import { Topics } from '../../topics';

/** A deposit was reversed from outside (once): taken from available as far as it went, the rest became the owner's debt. */
export class WalletChargedBackPayload {
  @IsString() @MinLength(1) ownerId!: string;
  @IsString() @MinLength(1) @MaxLength(200) reference!: string;
  @ValidateNested() @Type(() => MoneyDto) amount!: MoneyDto;
  @ValidateNested() @Type(() => MoneyDto) fromAvailable!: MoneyDto;
}

export const WalletChargedBack = defineEvent({
  type: 'WalletChargedBack',
  version: 1,
  topic: Topics.walletChargedBack,
  payload: WalletChargedBackPayload,
  keyOf: (p) => p.ownerId,
});
