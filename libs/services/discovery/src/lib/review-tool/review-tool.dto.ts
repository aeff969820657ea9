import { Type } from 'class-transformer';
import { AMOUNT_MINOR_PATTERN } from '@tollgate/contracts';
import { ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize, IsArray, IsBoolean, IsIn, IsInt, IsISO8601, IsObject, IsOptional, IsString, Matches, MaxLength, Min, MinLength, ValidateNested,
} from 'class-validator';

export class DeprecationDto {
  @ApiPropertyOptional() @IsISO8601({ strict: true }) sunsetAt!: string;
  @ApiPropertyOptional() @IsOptional() @IsString() @MinLength(1) replacement?: string;
}

export class ExampleDto {
  @ApiPropertyOptional() @IsOptional() @IsString() @MaxLength(500) title?: string;
  @ApiPropertyOptional() @IsObject() arguments!: Record<string, unknown>;
}

/** Admin overrides of a tool's listing; each given field wins over the provider's. */
export class UpdateToolDto {
  @ApiPropertyOptional() @IsOptional() @Matches(/^[a-z0-9][a-z0-9 _/-]{0,63}$/) category?: string;
  @ApiPropertyOptional({ type: [String] }) @IsOptional() @IsArray() @ArrayMaxSize(32) @IsString({ each: true }) @MaxLength(64, { each: true }) tags?: string[];
  @ApiPropertyOptional() @IsOptional() @IsString() @MinLength(1) @MaxLength(1000) summary?: string;
  @ApiPropertyOptional({ enum: ['read', 'write'] }) @IsOptional() @IsIn(['read', 'write']) kind?: 'read' | 'write';
  @ApiPropertyOptional() @IsOptional() @IsString() @MinLength(1) @MaxLength(32) tier?: string;
  @ApiPropertyOptional() @IsOptional() @Matches(AMOUNT_MINOR_PATTERN) priceMinor?: string;
  @ApiPropertyOptional() @IsOptional() @Matches(/^[A-Z][A-Z0-9]{1,11}$/) asset?: string;
  @ApiPropertyOptional() @IsOptional() @IsInt() @Min(0) freeCallsPerDay?: number;
  @ApiPropertyOptional({ type: [ExampleDto] }) @IsOptional() @IsArray() @ArrayMaxSize(10) @ValidateNested({ each: true }) @Type(() => ExampleDto) examples?: ExampleDto[];
  @ApiPropertyOptional({ type: DeprecationDto }) @IsOptional() @ValidateNested() @Type(() => DeprecationDto) deprecation?: DeprecationDto;
  /** Whether a task-declaring agent gets a task at once (`required`: only as a task; `forbidden`: never at once). */
  @ApiPropertyOptional({ enum: ['optional', 'required', 'forbidden'] }) @IsOptional() @IsIn(['optional', 'required', 'forbidden']) taskSupport?: 'optional' | 'required' | 'forbidden';
  /**
   * Priced by use: `{ unit, unitPriceMinor, minimumMinor?, maximumMinor }` (minor units as strings); the maximum is
   * what a call holds. `null` goes back to the provider's (or the fixed) price. Checked by `checkMetered`.
   */
  @ApiPropertyOptional({ nullable: true }) @IsOptional() @IsObject() metered?: Record<string, unknown> | null;
  /** Marks the tool reviewed (drops `notReviewed`). */
  @ApiPropertyOptional() @IsOptional() @IsBoolean() reviewed?: boolean;
}
