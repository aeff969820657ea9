import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUUID, Length, Min, ValidateNested } from 'class-validator';
import { defineEvent } from '../../event-definition';
import { UsageReportDto } from '../../metered-price';
import { Topics } from '../../topics';

export const CONFIRMATION_METHODS = ['output_contract', 'read_back', 'reconciliation'] as const;
export type ConfirmationMethod = (typeof CONFIRMATION_METHODS)[number];

/**
 * The business effect is confirmed: for a read-only tool by the output-contract
 * check, for a writing tool by reading the resource back (C4).
 */
export class EffectConfirmedPayload {
  @IsUUID() intentId!: string;
  @IsInt() @Min(1) attempt!: number;
  @IsIn(CONFIRMATION_METHODS) method!: ConfirmationMethod;
  /**
   * Additive: the provider that served the confirmed attempt — the one settlement pays, whatever order the
   * call's events arrive in (a fallback's CallDispatched may come after this event). Always set by producers now;
   * absent only on events recorded before it existed.
   */
  @IsOptional() @IsString() @Length(1, 200) providerId?: string;
  /** Additive: a metered call — the usage the confirmed result reported, which its charge is computed from. */
  @IsOptional() @ValidateNested() @Type(() => UsageReportDto) usage?: UsageReportDto;
}

export const EffectConfirmed = defineEvent({
  type: 'EffectConfirmed',
  version: 1,
  topic: Topics.effectConfirmed,
  payload: EffectConfirmedPayload,
  keyOf: (p) => p.intentId,
});
