import { IsOptional, IsUrl, Matches } from 'class-validator';

export class RegisterProviderDto {
  /** Stable provider id, e.g. `everything`. */
  @Matches(/^[a-z][a-z0-9-]{1,62}$/, { message: 'providerId must be 2-63 lower-case letters, digits or dashes' })
  providerId!: string;

  /** The provider's Streamable HTTP MCP endpoint. */
  @IsUrl({ require_tld: false, protocols: ['http', 'https'] })
  endpoint!: string;

  /** Price per call for every tool of this provider, in integer minor units (prices per tool land with the discovery issue). */
  @IsOptional()
  @Matches(/^(0|[1-9][0-9]{0,17})$/, { message: 'priceMinor must be a non-negative integer string' })
  priceMinor?: string;

  @IsOptional()
  @Matches(/^[A-Z][A-Z0-9]{1,11}$/)
  asset?: string;
}
