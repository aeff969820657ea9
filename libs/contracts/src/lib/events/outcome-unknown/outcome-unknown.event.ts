import { IsIn, IsInt, IsString, IsUUID, MaxLength, Min, MinLength } from 'class-validator';
import { defineEvent } from '../../event-definition';
import { Topics } from '../../topics';

export const UNKNOWN_OUTCOME_REASONS = ['deadline_passed', 'connection_lost', 'response_lost', 'execution_interrupted'] as const;
export type UnknownOutcomeReason = (typeof UNKNOWN_OUTCOME_REASONS)[number];

/**
 * The request was dispatched but no result came back: the effect may or may
 * not have happened. The call is reconciled by its operation key, never
 * dispatched again under a new one (B5).
 */
export class OutcomeUnknownPayload {
  @IsUUID() intentId!: string;
  @IsInt() @Min(1) attempt!: number;
  @IsString() @MinLength(1) providerId!: string;
  @IsIn(UNKNOWN_OUTCOME_REASONS) reason!: UnknownOutcomeReason;
  @IsString() @MaxLength(500) detail!: string;
}

export const OutcomeUnknown = defineEvent({
  type: 'OutcomeUnknown',
  version: 1,
  topic: Topics.outcomeUnknown,
  payload: OutcomeUnknownPayload,
  keyOf: (p) => p.intentId,
});
