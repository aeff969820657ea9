import { Type } from 'class-transformer';
import {
  IsArray, IsBoolean, IsHexadecimal, IsIn, IsInt, IsISO8601, IsObject, IsOptional, IsString, IsUrl, Length, Matches, MaxLength, Min, MinLength,
  ValidateIf, ValidateNested,
} from 'class-validator';
import { defineEvent } from '../../event-definition';
import { MeteredPriceDto } from '../../metered-price';
import { MoneyDto } from '../../money';
import { Topics } from '../../topics';

export const UPSTREAM_TRANSPORTS = ['http', 'stdio'] as const;
export type UpstreamTransport = (typeof UPSTREAM_TRANSPORTS)[number];

/** One provider serving a catalog tool, under its own upstream tool name. */
export class ToolBindingDto {
  @IsString() @MinLength(1) bindingId!: string;
  @IsString() @MinLength(1) providerId!: string;
  @IsIn(UPSTREAM_TRANSPORTS) transport!: UpstreamTransport;
  /** The provider's Streamable HTTP endpoint (`transport: http`). */
  @ValidateIf((b: ToolBindingDto) => b.transport === 'http')
  @IsUrl({ require_tld: false, protocols: ['http', 'https'] }) endpoint?: string;
  /** The command that starts the provider (`transport: stdio`), run by the platform, never by an agent. */
  @ValidateIf((b: ToolBindingDto) => b.transport === 'stdio')
  @IsString() @MinLength(1) command?: string;
  @IsOptional() @IsArray() @IsString({ each: true }) args?: string[];
  @IsString() @MinLength(1) upstreamToolName!: string;
  /** The contract the provider last listed; may differ from the catalog's approved one until an admin approves it. */
  @IsHexadecimal() @Length(64, 64) contractHash!: string;
  @IsIn(['healthy', 'unhealthy']) health!: 'healthy' | 'unhealthy';
  /** The input properties this provider's listed contract declares (an optional input it lacks is unsupported there). */
  @IsOptional() @IsArray() @IsString({ each: true }) inputProperties?: string[];
}

export class ToolChangelogEntryDto {
  @IsInt() @Min(1) version!: number;
  @IsHexadecimal() @Length(64, 64) contractHash!: string;
  @IsIn(['approved', 'pending', 'retired']) state!: 'approved' | 'pending' | 'retired';
  @IsISO8601({ strict: true }) at!: string;
  @IsString() @MaxLength(2000) note!: string;
}

export class ToolDeprecationDto {
  @IsISO8601({ strict: true }) sunsetAt!: string;
  @IsOptional() @IsString() @MinLength(1) replacement?: string;
}

/**
 * C9: how a writing tool's effect is read back by operation key — the tool to
 * call, the argument that carries the key, and the request arguments that the
 * resource read back must equal (same-named fields of its structuredContent).
 */
export class ReadBackDto {
  @Matches(/^[A-Za-z0-9_.-]{1,128}$/) tool!: string;
  @IsString() @MinLength(1) keyArgument!: string;
  @IsArray() @IsString({ each: true }) compare!: string[];
}

export class ToolExampleDto {
  @IsOptional() @IsString() @MaxLength(500) title?: string;
  @IsObject() arguments!: Record<string, unknown>;
}

/**
 * The latest state of one catalog tool, as it is in force: published on a
 * compacted topic keyed by `toolId`, so any read model (gateway, execution)
 * rebuilds from it. The contract fields are those of the APPROVED version
 * (`version`); a changed upstream contract waits as `pendingVersion` until an
 * admin approves it (R3).
 */
export class CatalogToolChangedPayload {
  @IsString() @MinLength(1) toolId!: string;
  @Matches(/^[A-Za-z0-9_.-]{1,128}$/) name!: string;
  /** `removed`: no provider lists it any more; kept so calls can tell TOOL_REMOVED from an unknown name. */
  @IsIn(['active', 'removed']) status!: 'active' | 'removed';
  @IsInt() @Min(1) version!: number;
  @IsHexadecimal() @Length(64, 64) contractHash!: string;
  @IsOptional() @IsInt() @Min(2) pendingVersion?: number;
  /** Versions no longer in force (a call pinning one gets CONTRACT_VERSION_RETIRED). */
  @IsArray() @IsInt({ each: true }) retiredVersions!: number[];
  @IsIn(['read', 'write']) kind!: 'read' | 'write';
  @Matches(/^[a-z0-9][a-z0-9 _/-]{0,63}$/) category!: string;
  @IsArray() @IsString({ each: true }) tags!: string[];
  @IsString() @MaxLength(1000) summary!: string;
  @IsString() description!: string;
  @IsOptional() @IsString() title?: string;
  @IsObject() inputSchema!: Record<string, unknown>;
  @IsOptional() @IsObject() outputSchema?: Record<string, unknown>;
  @IsArray() @IsString({ each: true }) optionalInputFields!: string[];
  @IsArray() @IsString({ each: true }) optionalOutputFields!: string[];
  @IsArray() @ValidateNested({ each: true }) @Type(() => ToolExampleDto) examples!: ToolExampleDto[];
  @IsArray() @ValidateNested({ each: true }) @Type(() => ToolChangelogEntryDto) changelog!: ToolChangelogEntryDto[];
  @IsOptional() @ValidateNested() @Type(() => ToolDeprecationDto) deprecation?: ToolDeprecationDto;
  /** True until an admin has reviewed the provider's tool. */
  @IsBoolean() notReviewed!: boolean;
  @IsString() @MinLength(1) @MaxLength(32) tier!: string;
  /** Price per call in integer minor units; `0` is a free tool. */
  @ValidateNested() @Type(() => MoneyDto) price!: MoneyDto;
  /** Additive: priced by use — so much per unit, at least a minimum; `price` is then the most one call may cost. */
  @IsOptional() @ValidateNested() @Type(() => MeteredPriceDto) metered?: MeteredPriceDto;
  /** Decimal places of the asset, for display only (USDC: 6). */
  @IsInt() @Min(0) assetDecimals!: number;
  /** Calls per agent per UTC day that cost nothing; null when the tool has no free quota. */
  @IsOptional() @IsInt() @Min(0) freeCallsPerDay?: number;
  @IsOptional() @IsObject() annotations?: Record<string, unknown>;
  /** Additive: the provider runs the tool as a task (`execution.taskSupport`); a task-declaring agent gets a task at once. */
  @IsOptional() @IsIn(['optional', 'required']) taskSupport?: 'optional' | 'required';
  /** Writing tools: the declared read-back (contract card, C9). Optional, additive. */
  @IsOptional() @ValidateNested() @Type(() => ReadBackDto) readBack?: ReadBackDto;
  /** The upstream's own metadata for the tool (its `_meta`), as data. */
  @IsOptional() @IsObject() providerMeta?: Record<string, unknown>;
  @IsArray() @ValidateNested({ each: true }) @Type(() => ToolBindingDto) bindings!: ToolBindingDto[];
}

export const CatalogToolChanged = defineEvent({
  type: 'CatalogToolChanged',
  version: 2,
  topic: Topics.catalogTool,
  payload: CatalogToolChangedPayload,
  keyOf: (p) => p.toolId,
});
