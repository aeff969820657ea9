import { Type } from 'class-transformer';
import { IsBoolean, IsHexadecimal, IsInt, IsISO8601, IsObject, IsOptional, IsString, IsUUID, Length, Min, MinLength, ValidateNested } from 'class-validator';
import { defineEvent } from '../../event-definition';
import { MeteredPriceDto } from '../../metered-price';
import { MoneyDto } from '../../money';
import { Topics } from '../../topics';

/** The access-policy versions in force when the call was accepted (C2: pinned at dispatch). Absent: no policy applied. */
export class PinnedPolicyVersionsDto {
  @IsOptional() @IsInt() @Min(1) ownerPolicyVersion?: number;
  @IsOptional() @IsInt() @Min(1) urlPolicyVersion?: number;
}

/**
 * The gateway accepted an agent's call. Identity (owner, agent, URL) comes
 * from the credential, never from the tool arguments.
 */
export class CallRequestedPayload {
  @IsUUID() intentId!: string;
  @IsString() @MinLength(1) ownerId!: string;
  @IsString() @MinLength(1) agentId!: string;
  /** The MCP URL (profile) the call came through. */
  @IsString() @MinLength(1) mcpUrlId!: string;
  @IsString() @MinLength(1) toolId!: string;
  @IsString() @MinLength(1) toolName!: string;
  @IsInt() @Min(1) contractVersion!: number;
  @IsObject() arguments!: Record<string, unknown>;
  /** sha256 (hex) of the canonical JSON of `arguments`. */
  @IsHexadecimal() @Length(64, 64) argumentsHash!: string;
  @ValidateNested() @Type(() => MoneyDto) price!: MoneyDto;
  /** Agent-scoped operation key, when the agent sent one (operation keys land with the execution issue). */
  @IsOptional() @IsString() @MinLength(1) operationKey?: string;
  @IsISO8601({ strict: true }) deadlineAt!: string;
  /** Additive (optional) field: consumers that predate it never see it on calls made without a policy. */
  @IsOptional() @ValidateNested() @Type(() => PinnedPolicyVersionsDto) accessPolicy?: PinnedPolicyVersionsDto;
  /** Additive: the tool's daily free calls per agent, when it has a free quota (payment counts them). */
  @IsOptional() @IsInt() @Min(0) freeCallsPerDay?: number;
  /** Additive: a signed x402 payment the agent sent in `_meta["x402/payment"]`; payment verifies it. */
  @IsOptional() @IsObject() x402Payment?: Record<string, unknown>;
  /** Additive: an MPP credential the agent sent (`_meta["org.paymentauth/credential"]` or `Payment-Authorization`); payment verifies it. */
  @IsOptional() @IsObject() mppCredential?: Record<string, unknown>;
  /** Additive: the agent asked to hear the provider's progress (`_meta.progressToken`); execution relays it as CallProgressed. */
  @IsOptional() @IsBoolean() progress?: boolean;
  /** Additive: the tool is priced by use; `price` is then the most the call may cost (what is held). */
  @IsOptional() @ValidateNested() @Type(() => MeteredPriceDto) metered?: MeteredPriceDto;
}

export const CallRequested = defineEvent({
  type: 'CallRequested',
  version: 1,
  topic: Topics.callRequested,
  payload: CallRequestedPayload,
  keyOf: (p) => p.intentId,
});
