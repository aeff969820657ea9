import { IsISO8601, IsString, IsUUID, MinLength } from 'class-validator';
import { defineEvent } from '../../event-definition';
import { Topics } from '../../topics';

/**
 * The agent asked to cancel its call (the tasks extension's `tasks/cancel`). A request, not a
 * verdict: execution, which owns dispatch, cancels a call it has not sent (EffectRejected CALL_CANCELLED, the hold is
 * refunded) and ignores the request for a call already sent.
 */
export class CallCancelRequestedPayload {
  @IsUUID() intentId!: string;
  /** The agent that asked (from its credential; the call's own agent). */
  @IsString() @MinLength(1) agentId!: string;
  @IsISO8601({ strict: true }) requestedAt!: string;
}

export const CallCancelRequested = defineEvent({
  type: 'CallCancelRequested',
  version: 1,
  topic: Topics.callCancelRequested,
  payload: CallCancelRequestedPayload,
  keyOf: (p) => p.intentId,
});
