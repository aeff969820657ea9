import { IsInt, IsObject, IsOptional, IsString, IsUUID, Matches, MaxLength, Min, MinLength } from 'class-validator';
import { defineEvent } from '../../event-definition';
import { Topics } from '../../topics';

/** The result did not hold up: the call is never reported as a success (C6, last row). */
export class EffectRejectedPayload {
  @IsUUID() intentId!: string;
  @IsInt() @Min(1) attempt!: number;
  /** The error code the agent sees, e.g. PROVIDER_CONTRACT_VIOLATION. */
  @Matches(/^[A-Z][A-Z0-9_]+$/) code!: string;
  @IsString() @MinLength(1) @MaxLength(500) reason!: string;
  /** What differed between the request and the read-back, where that was the check. */
  @IsOptional() @IsObject() difference?: Record<string, unknown>;
  /** The client capabilities the provider required and the gateway does not offer upstream (its -32021), e.g. `{ sampling: {} }`. */
  @IsOptional() @IsObject() requiredCapabilities?: Record<string, unknown>;
}

export const EffectRejected = defineEvent({
  type: 'EffectRejected',
  version: 1,
  topic: Topics.effectRejected,
  payload: EffectRejectedPayload,
  keyOf: (p) => p.intentId,
});
