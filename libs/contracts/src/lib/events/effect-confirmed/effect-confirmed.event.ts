import { IsIn, IsInt, IsUUID, Min } from 'class-validator';
import { defineEvent } from '../../event-definition';
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
}

export const EffectConfirmed = defineEvent({
  type: 'EffectConfirmed',
  version: 1,
  topic: Topics.effectConfirmed,
  payload: EffectConfirmedPayload,
  keyOf: (p) => p.intentId,
});
