import { Type } from 'class-transformer';
import { IsOptional, IsString, IsUUID, MaxLength, MinLength, ValidateNested } from 'class-validator';
import { defineEvent } from '../../event-definition';
import { MoneyDto } from '../../money';
import { Topics } from '../../topics';

/** Money entered an owner's prepaid wallet (an admin deposit, or an agent's verified x402 payment). Credited once per reference. */
export class WalletFundedPayload {
  @IsUUID() depositId!: string;
  @IsString() @MinLength(1) ownerId!: string;
  /** The external reference (bank transfer id, x402 nonce): the same reference never credits twice. */
  @IsString() @MinLength(1) @MaxLength(200) reference!: string;
  @IsString() @MinLength(1) @MaxLength(40) source!: string;
  @ValidateNested() @Type(() => MoneyDto) amount!: MoneyDto;
  /** Additive: the part of the deposit that repaid the owner's debt (the rest became available). */
  @IsOptional() @ValidateNested() @Type(() => MoneyDto) repaidDebt?: MoneyDto;
}

export const WalletFunded = defineEvent({
  type: 'WalletFunded',
  version: 1,
  topic: Topics.walletFunded,
  payload: WalletFundedPayload,
  keyOf: (p) => p.ownerId,
});
