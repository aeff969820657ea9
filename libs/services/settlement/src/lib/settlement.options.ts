import { type ServiceRuntimeOptions } from '@tollgate/config';

export interface SettlementOptions extends ServiceRuntimeOptions {
  /** How long after EffectConfirmed a call stays VERIFYING before its hold is captured. */
  verificationWindowMs: number;
  /** How often due verification windows are closed. */
  sweepIntervalMs: number;
  /** The platform's take rate in basis points (1,000 = 10 %), floored to the minor unit. */
  feeBps: number;
  /** Bearer token of the statements and payouts admin API; without one the API refuses every call. */
  adminToken?: string;
}
