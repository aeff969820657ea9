import { IsInt, IsISO8601, IsOptional, IsString, IsUUID, Min, MinLength } from 'class-validator';
import { defineEvent } from '../../event-definition';
import { Topics } from '../../topics';

/** Execution is about to send the request to a provider. Committed BEFORE the request leaves (B4, C8). */
export class CallDispatchedPayload {
  @IsUUID() intentId!: string;
  @IsInt() @Min(1) attempt!: number;
  @IsString() @MinLength(1) providerId!: string;
  @IsString() @MinLength(1) bindingId!: string;
  @IsString() @MinLength(1) upstreamToolName!: string;
  @IsISO8601({ strict: true }) deadlineAt!: string;
  @IsOptional() @IsString() @MinLength(1) operationKey?: string;
}

export const CallDispatched = defineEvent({
  type: 'CallDispatched',
  version: 1,
  topic: Topics.callDispatched,
  payload: CallDispatchedPayload,
  keyOf: (p) => p.intentId,
});
