import { Type } from 'class-transformer';
import { ArrayMinSize, IsArray, IsHexadecimal, IsIn, IsInt, IsObject, IsOptional, IsString, IsUrl, Length, Min, MinLength, ValidateNested } from 'class-validator';
import { defineEvent } from '../../event-definition';
import { MoneyDto } from '../../money';
import { Topics } from '../../topics';

/** One provider serving a catalog tool, under its own upstream tool name. */
export class ToolBindingDto {
  @IsString() @MinLength(1) bindingId!: string;
  @IsString() @MinLength(1) providerId!: string;
  /** The provider's Streamable HTTP endpoint. */
  @IsUrl({ require_tld: false, protocols: ['http', 'https'] }) endpoint!: string;
  @IsString() @MinLength(1) upstreamToolName!: string;
}

/**
 * The latest state of one catalog tool: published on a compacted topic keyed
 * by `toolId`, so any read model (gateway, execution) rebuilds from it.
 */
export class CatalogToolChangedPayload {
  @IsString() @MinLength(1) toolId!: string;
  @IsString() @MinLength(1) name!: string;
  @IsIn(['active', 'removed']) status!: 'active' | 'removed';
  @IsInt() @Min(1) version!: number;
  @IsHexadecimal() @Length(64, 64) contractHash!: string;
  @IsString() description!: string;
  @IsObject() inputSchema!: Record<string, unknown>;
  @IsOptional() @IsObject() outputSchema?: Record<string, unknown>;
  @IsOptional() @IsObject() annotations?: Record<string, unknown>;
  @ValidateNested() @Type(() => MoneyDto) price!: MoneyDto;
  @IsArray() @ArrayMinSize(1) @ValidateNested({ each: true }) @Type(() => ToolBindingDto) bindings!: ToolBindingDto[];
}

export const CatalogToolChanged = defineEvent({
  type: 'CatalogToolChanged',
  version: 1,
  topic: Topics.catalogTool,
  payload: CatalogToolChangedPayload,
  keyOf: (p) => p.toolId,
});
