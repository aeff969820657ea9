import { IsIn, IsOptional, Matches } from 'class-validator';
import { AMOUNT_MINOR_PATTERN } from './money';

/** A unit of work a provider names: lower-case letters, digits and `_`, e.g. `1k_tokens`, `row`, `page`, `100_chars`. */
export const USAGE_UNIT_PATTERN = /^[a-z0-9][a-z0-9_]{0,31}$/;

/**
 * A metered price, beside the tool's `price` (which is then the most one call may cost: what is held). Integer minor
 * units of the price's asset, as decimal strings: so much per unit, at least the minimum when given.
 */
export class MeteredPriceDto {
  @Matches(USAGE_UNIT_PATTERN, { message: 'unit must be 1 to 32 lower-case letters, digits or _ (e.g. 1k_tokens)' })
  unit!: string;

  @Matches(AMOUNT_MINOR_PATTERN, { message: 'unitPriceMinor must be a whole, non-negative number of minor units, as a string' })
  unitPriceMinor!: string;

  @IsOptional()
  @Matches(AMOUNT_MINOR_PATTERN, { message: 'minimumMinor must be a whole, non-negative number of minor units, as a string' })
  minimumMinor?: string;
}

/** What a provider reported it used, as execution read it (`units`), or why there was no usable report (`problem`). */
export class UsageReportDto {
  @IsOptional() @Matches(USAGE_UNIT_PATTERN) unit?: string;
  @IsOptional() @Matches(/^(0|[1-9][0-9]{0,14})$/) units?: string;
  @IsOptional() @IsIn(['missing', 'malformed', 'negative', 'wrong_unit']) problem?: 'missing' | 'malformed' | 'negative' | 'wrong_unit';
}

/** A metered call's charge as settlement computed it: the price, the units reported, and a flag for ops. */
export class SettledUsageDto extends MeteredPriceDto {
  @IsOptional() @Matches(/^(0|[1-9][0-9]{0,14})$/) units?: string;
  @IsOptional() @IsIn(['missing', 'malformed', 'negative', 'wrong_unit', 'over_max']) flag?: 'missing' | 'malformed' | 'negative' | 'wrong_unit' | 'over_max';
}
