import { Type } from 'class-transformer';
import { IsArray, IsBoolean, IsHexadecimal, IsIn, IsInt, IsObject, IsOptional, IsString, IsUUID, Length, Min, MinLength, ValidateNested } from 'class-validator';
import { defineEvent } from '../../event-definition';
import { UsageReportDto } from '../../metered-price';
import { Topics } from '../../topics';

export const CALL_OUTCOMES = ['success', 'provider_error', 'contract_violation'] as const;
export type CallOutcome = (typeof CALL_OUTCOMES)[number];

/** The upstream's tool result exactly as received: provider output is data, never instructions. */
export class UpstreamResultDto {
  @IsArray() @IsObject({ each: true }) content!: Record<string, unknown>[];
  @IsOptional() @IsObject() structuredContent?: Record<string, unknown>;
  @IsOptional() @IsBoolean() isError?: boolean;
}

/** The provider answered. */
export class ResultReceivedPayload {
  @IsUUID() intentId!: string;
  @IsInt() @Min(1) attempt!: number;
  @IsString() @MinLength(1) providerId!: string;
  @IsIn(CALL_OUTCOMES) outcome!: CallOutcome;
  /** Why the outcome is what it is, e.g. `ok`, `tool_error`, `output_schema_mismatch`. */
  @IsString() @MinLength(1) classification!: string;
  /** sha256 (hex) of the canonical JSON of `result`. */
  @IsHexadecimal() @Length(64, 64) resultDigest!: string;
  @ValidateNested() @Type(() => UpstreamResultDto) result!: UpstreamResultDto;
  /** Additive: a metered call's usage as the provider reported it (read from the result's `_meta["tollgate/usage"]`). */
  @IsOptional() @ValidateNested() @Type(() => UsageReportDto) usage?: UsageReportDto;
}

export const ResultReceived = defineEvent({
  type: 'ResultReceived',
  version: 1,
  topic: Topics.resultReceived,
  payload: ResultReceivedPayload,
  keyOf: (p) => p.intentId,
});
