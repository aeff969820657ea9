import { type ServiceRuntimeOptions } from '@tollgate/config';

export interface SettlementOptions extends ServiceRuntimeOptions {
  /** How long after EffectConfirmed a call stays VERIFYING before its hold is captured. */
  verificationWindowMs: number;
  /** How often due verification windows are closed. */
  sweepIntervalMs: number;
}
