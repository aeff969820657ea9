import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsISO8601, IsInt, IsOptional, IsString, IsUUID, Matches, Max, Min } from 'class-validator';
import { Type } from 'class-transformer';
import { MAX_PAGE } from './journal-query';

const ID = /^[\x21-\x7e]{1,200}$/;

/** Filters of the journal (all optional; combined with AND). Times are effective times (when the money moved). */
export class JournalQueryDto {
  @ApiPropertyOptional({ description: 'One account, e.g. owner:<id>:available, provider:<id>:payable, platform:revenue.' })
  @IsOptional() @Matches(ID) account?: string;

  @ApiPropertyOptional({ description: 'Every account of this owner.' })
  @IsOptional() @Matches(ID) ownerId?: string;

  @ApiPropertyOptional({ description: 'Every account of this provider.' })
  @IsOptional() @Matches(ID) providerId?: string;

  @ApiPropertyOptional({ description: 'Asset code, e.g. USDC.' })
  @IsOptional() @Matches(/^[A-Z0-9]{2,12}$/) asset?: string;

  @ApiPropertyOptional({ description: 'Entries of one call.' })
  @IsOptional() @IsUUID() intentId?: string;

  @ApiPropertyOptional({ description: 'deposit | chargeback | hold | capture | void | settle | payout.' })
  @IsOptional() @Matches(/^[a-z]{1,20}$/) kind?: string;

  @ApiPropertyOptional({ description: 'From this effective time (inclusive), ISO 8601.' })
  @IsOptional() @IsISO8601({ strict: true }) from?: string;

  @ApiPropertyOptional({ description: 'Until this effective time (exclusive), ISO 8601.' })
  @IsOptional() @IsISO8601({ strict: true }) to?: string;

  @ApiPropertyOptional({ description: 'Entries of calls of this tool (its catalog name).' })
  @IsOptional() @Matches(ID) tool?: string;

  @ApiPropertyOptional({ description: 'Entries of calls of this agent.' })
  @IsOptional() @Matches(ID) agentId?: string;

  @ApiPropertyOptional({ description: 'From this recorded time (when the ledger learnt of the entry; inclusive), ISO 8601.' })
  @IsOptional() @IsISO8601({ strict: true }) recordedFrom?: string;

  @ApiPropertyOptional({ description: 'Until this recorded time (exclusive), ISO 8601.' })
  @IsOptional() @IsISO8601({ strict: true }) recordedTo?: string;

  @ApiPropertyOptional({ description: 'The previous page\'s nextCursor.' })
  @IsOptional() @IsString() @Matches(/^[A-Za-z0-9_-]{1,1000}$/) cursor?: string;

  @ApiPropertyOptional({ description: `Page size, 1 to ${MAX_PAGE} (default 100).` })
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(MAX_PAGE) limit?: number;
}

/** A statement's period: [from, to). */
export class PeriodDto {
  @ApiPropertyOptional({ description: 'Start of the period (inclusive), ISO 8601.' })
  @IsISO8601({ strict: true }) from!: string;

  @ApiPropertyOptional({ description: 'End of the period (exclusive), ISO 8601.' })
  @IsISO8601({ strict: true }) to!: string;

  @ApiPropertyOptional({ description: 'json (default) or csv.' })
  @IsOptional() @Matches(/^(json|csv)$/) format?: 'json' | 'csv';
}
