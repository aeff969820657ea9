import { IsString, Matches } from 'class-validator';

/**
 * An amount of money on the wire: integer minor units as a decimal string
 * (JSON has no bigint) plus the asset code. Convert with `toMinor`/`fromMinor`.
 */
export class MoneyDto {
  @Matches(/^-?(0|[1-9][0-9]*)$/, { message: 'amountMinor must be an integer number of minor units, as a string' })
  amountMinor!: string;

  @Matches(/^[A-Z][A-Z0-9]{1,11}$/, { message: 'asset must be an upper-case asset code such as USDC' })
  @IsString()
  asset!: string;
}

export function money(amountMinor: bigint, asset: string): MoneyDto {
  return Object.assign(new MoneyDto(), { amountMinor: amountMinor.toString(), asset });
}

export function toMinor(m: MoneyDto): bigint {
  return BigInt(m.amountMinor);
}
