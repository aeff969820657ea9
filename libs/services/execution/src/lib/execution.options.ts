import { type ServiceRuntimeOptions } from '@tollgate/config';

export interface ExecutionOptions extends ServiceRuntimeOptions {
  /** How often (ms) the reconciler looks for interrupted attempts and open cases. */
  reconcileIntervalMs: number;
  /** Bearer token of the reconciliation admin API (ops CLI); the API refuses every call without one. */
  adminToken?: string;
}
