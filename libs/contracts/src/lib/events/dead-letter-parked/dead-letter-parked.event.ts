import { IsArray, IsInt, IsOptional, IsString, Min, MinLength } from 'class-validator';
import { defineEvent } from '../../event-definition';
import { Topics } from '../../topics';

/**
 * A message a consumer could not accept (its payload broke the contract),
 * parked with the reason so ops can inspect and replay it.
 */
export class DeadLetterParkedPayload {
  @IsString() @MinLength(1) consumer!: string;
  @IsString() @MinLength(1) sourceTopic!: string;
  @IsInt() @Min(0) partition!: number;
  @IsString() offset!: string;
  @IsOptional() @IsString() key?: string;
  @IsArray() @IsString({ each: true }) reasons!: string[];
  /** The raw message value, as received. */
  @IsString() value!: string;
}

export const DeadLetterParked = defineEvent({
  type: 'DeadLetterParked',
  version: 1,
  topic: Topics.deadLetter,
  payload: DeadLetterParkedPayload,
  keyOf: (p) => `${p.sourceTopic}:${p.partition}:${p.offset}`,
});
