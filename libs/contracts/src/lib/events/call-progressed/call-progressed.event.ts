import { Equals, IsInt, IsNumber, IsOptional, IsPositive, IsString, IsUUID, Max, MaxLength, Min } from 'class-validator';
import { defineEvent } from '../../event-definition';
import { Topics } from '../../topics';

/** Longest progress message relayed: the provider's words, shown to the agent as data. */
export const MAX_PROGRESS_MESSAGE_CHARS = 500;

/**
 * The provider reported progress on a call whose agent asked for it (`CallRequested.progress`). Not a fact of the
 * call's life: nothing is decided on it and nothing replays it. It is published once, at most, when it happens (no
 * outbox); one lost on the way only means a notification the agent does not see.
 */
export class CallProgressedPayload {
  @IsUUID() intentId!: string;
  /** The dispatch attempt that reported it. */
  @IsInt() @Min(1) attempt!: number;
  /** Increases with every notification of one attempt (MCP progress). */
  @IsNumber({ allowNaN: false, allowInfinity: false }) @Min(0) @Max(Number.MAX_SAFE_INTEGER) progress!: number;
  @IsOptional() @IsNumber({ allowNaN: false, allowInfinity: false }) @IsPositive() @Max(Number.MAX_SAFE_INTEGER) total?: number;
  @IsOptional() @IsString() @MaxLength(MAX_PROGRESS_MESSAGE_CHARS) message?: string;
  /**
   * The attempt's last notice: the provider's call returned, and it was sent after every notice of the attempt (the
   * attempt's outcome is reported after it). `progress` repeats the last value relayed (0 when none), and it is not
   * relayed itself: it lets the request that asked for progress answer only once the notices before it arrived.
   */
  @IsOptional() @Equals(true) ended?: true;
}

export const CallProgressed = defineEvent({
  type: 'CallProgressed',
  version: 1,
  topic: Topics.callProgressed,
  payload: CallProgressedPayload,
  keyOf: (p) => p.intentId,
});
