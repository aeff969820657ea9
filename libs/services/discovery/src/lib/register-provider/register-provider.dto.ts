import { Type } from 'class-transformer';
import { AMOUNT_MINOR_PATTERN } from '@tollgate/contracts';
import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize, IsArray, IsIn, IsInt, IsOptional, IsString, IsUrl, Matches, MaxLength, Min, MinLength, ValidateIf, ValidateNested,
} from 'class-validator';

/** Listing defaults for every tool of a provider; a tool's own `_meta["tollgate/listing"]` and admin overrides win. */
export class ProviderDefaultsDto {
  @ApiPropertyOptional({ example: 'weather' })
  @IsOptional() @Matches(/^[a-z0-9][a-z0-9 _/-]{0,63}$/, { message: 'category must be 1-64 lower-case characters' }) category?: string;

  @ApiPropertyOptional({ description: 'Price per call in integer minor units of `asset`.', example: '10000' })
  @IsOptional() @Matches(AMOUNT_MINOR_PATTERN, { message: 'priceMinor must be a non-negative integer string' }) priceMinor?: string;

  @ApiPropertyOptional({ example: 'USDC' })
  @IsOptional() @Matches(/^[A-Z][A-Z0-9]{1,11}$/) asset?: string;

  @ApiPropertyOptional({ example: 'standard' })
  @IsOptional() @IsString() @MinLength(1) @MaxLength(32) tier?: string;

  @ApiPropertyOptional({ description: 'Free calls per agent per UTC day.' })
  @IsOptional() @IsInt() @Min(0) freeCallsPerDay?: number;
}

export class RegisterProviderDto {
  @ApiProperty({ description: 'Stable provider id.', example: 'everything' })
  @Matches(/^[a-z][a-z0-9-]{1,62}$/, { message: 'providerId must be 2-63 lower-case letters, digits or dashes' })
  providerId!: string;

  @ApiPropertyOptional({ enum: ['http', 'stdio'], default: 'http' })
  @IsOptional() @IsIn(['http', 'stdio']) transport?: 'http' | 'stdio';

  @ApiPropertyOptional({ description: 'Streamable HTTP endpoint (transport http).', example: 'http://127.0.0.1:3100/mcp' })
  @ValidateIf((d: RegisterProviderDto) => (d.transport ?? 'http') === 'http')
  @IsUrl({ require_tld: false, protocols: ['http', 'https'] }) endpoint?: string;

  @ApiPropertyOptional({ description: 'Command that starts the provider (transport stdio).', example: 'node' })
  @ValidateIf((d: RegisterProviderDto) => d.transport === 'stdio')
  @IsString() @MinLength(1) @MaxLength(1000) command?: string;

  @ApiPropertyOptional({ type: [String] })
  @IsOptional() @IsArray() @ArrayMaxSize(64) @IsString({ each: true }) args?: string[];

  @ApiPropertyOptional({ type: ProviderDefaultsDto })
  @IsOptional() @ValidateNested() @Type(() => ProviderDefaultsDto) defaults?: ProviderDefaultsDto;
}
