import { Type } from 'class-transformer';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, IsArray, IsIn, IsInt, IsOptional, IsString, IsUUID, Length, Matches, Min, ValidateNested } from 'class-validator';

export class CreateOwnerDto {
  @IsString() @Length(1, 200) name!: string;
}

export class CreateAgentDto {
  @IsString() @Length(1, 200) name!: string;
}

export class ProviderRulesDto {
  @ApiPropertyOptional({ type: [String] }) @IsOptional() @IsArray() @IsString({ each: true }) allow?: string[];
  @ApiPropertyOptional({ type: [String] }) @IsOptional() @IsArray() @IsString({ each: true }) deny?: string[];
}

/** An MCP URL's profile (G1). Omitted fields keep their value on update. */
export class McpUrlProfileDto {
  @ApiPropertyOptional({ enum: ['full', 'search', 'auto'] })
  @IsOptional() @IsIn(['full', 'search', 'auto']) discoveryMode?: 'full' | 'search' | 'auto';

  @ApiPropertyOptional({ description: 'auto: full discovery while the accessible tools number at most this.' })
  @IsOptional() @IsInt() @Min(0) autoThreshold?: number;

  @ApiPropertyOptional({ type: [String], description: 'search: the tools listed beside the hosted ones (at most five).' })
  @IsOptional() @IsArray() @ArrayMaxSize(5) @IsString({ each: true }) pinnedTools?: string[];

  @ApiPropertyOptional({ type: [String], nullable: true, description: 'Tools this URL exposes; with scopeCategories null too, the whole catalog.' })
  @IsOptional() @IsArray() @IsString({ each: true }) scopeTools?: string[] | null;

  @ApiPropertyOptional({ type: [String], nullable: true })
  @IsOptional() @IsArray() @IsString({ each: true }) scopeCategories?: string[] | null;

  @ApiPropertyOptional({ type: ProviderRulesDto, nullable: true })
  @IsOptional() @ValidateNested() @Type(() => ProviderRulesDto) providerRules?: ProviderRulesDto | null;
}

export class CreateMcpUrlDto extends McpUrlProfileDto {
  @Matches(/^[a-z0-9][a-z0-9-]{1,62}$/, { message: 'slug must be 2-63 lower-case letters, digits or dashes' }) slug!: string;
  /** Private to this owner's agents; shared when absent. */
  @IsOptional() @IsUUID() ownerId?: string;
}
