import { IsString, Matches } from 'class-validator';

/**
 * The largest amount, in minor units, that may enter the system in one piece (a deposit, a price, an x402
 * authorization, an amount on an event): 15 digits. PostgreSQL keeps balances in `bigint` (≤ 9.2 × 10^18), so
 * thousands of maximal amounts still sum without overflow; anything bigger is refused where it enters instead of
 * failing later inside a consumer.
 */
export const MAX_AMOUNT_MINOR = 999_999_999_999_999n;
/** 0 … MAX_AMOUNT_MINOR as a decimal string. */
export const AMOUNT_MINOR_PATTERN = /^(0|[1-9][0-9]{0,14})$/;
/** 1 … MAX_AMOUNT_MINOR as a decimal string. */
export const POSITIVE_AMOUNT_MINOR_PATTERN = /^[1-9][0-9]{0,14}$/;
/** −MAX_AMOUNT_MINOR … MAX_AMOUNT_MINOR as a decimal string (balances and movements carry a sign). */
export const SIGNED_AMOUNT_MINOR_PATTERN = /^-?(0|[1-9][0-9]{0,14})$/;

/** Whether a bigint is an amount the system accepts in one piece. */
export function isBoundedAmount(minor: bigint): boolean {
  return minor >= -MAX_AMOUNT_MINOR && minor <= MAX_AMOUNT_MINOR;
}

/**
 * An amount of money on the wire: integer minor units as a decimal string
 * (JSON has no bigint) plus the asset code. Convert with `toMinor`/`fromMinor`.
 */
export class MoneyDto {
  @Matches(SIGNED_AMOUNT_MINOR_PATTERN, { message: 'amountMinor must be an integer number of minor units of at most 15 digits, as a string' })
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

/** Decimal places of each asset's minor unit, as people read the amounts (an asset not listed: 6, as stablecoins). */
export const ASSET_DECIMALS: Readonly<Record<string, number>> = { USDC: 6, USDT: 6, USD: 2, EUR: 2 };

export function decimalsOf(asset: string): number {
  return ASSET_DECIMALS[asset] ?? 6;
}

/** Minor units as a decimal number string, e.g. 250000 USDC → "0.25", -1500 EUR → "-15.00" (at least 2 decimals). */
export function decimalAmount(minor: bigint, asset: string, decimals = decimalsOf(asset)): string {
  const negative = minor < 0n;
  const abs = negative ? -minor : minor;
  const unit = 10n ** BigInt(decimals);
  let frac = (abs % unit).toString().padStart(decimals, '0').replace(/0+$/, '');
  if (frac.length < 2 && decimals >= 2) frac = frac.padEnd(2, '0');
  return `${negative ? '-' : ''}${abs / unit}${frac ? `.${frac}` : ''}`;
}

/** Minor units as a person reads them, with the asset: 250000 USDC → "0.25 USDC". */
export function displayAmount(minor: bigint, asset: string, decimals = decimalsOf(asset)): string {
  return `${decimalAmount(minor, asset, decimals)} ${asset}`;
}
