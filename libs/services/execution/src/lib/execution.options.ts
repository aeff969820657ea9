import { type ServiceRuntimeOptions } from '@tollgate/config';
import { type UpstreamCredentials } from '@tollgate/mcp-runtime';

export interface ExecutionOptions extends ServiceRuntimeOptions {
  /** How often (ms) the reconciler looks for interrupted attempts and open cases. */
  reconcileIntervalMs: number;
  /** How long (ms) past its deadline a dispatched attempt with no result counts as interrupted (default 5 s). */
  stallGraceMs?: number;
  /** Bearer token of the reconciliation admin API (ops CLI); the API refuses every call without one. */
  adminToken?: string;
  /** Tokens presented to providers, by origin (never on the bus or in the catalog). */
  upstreamCredentials?: UpstreamCredentials;
  /** Calls to one provider at once, per process (default 64), with per-provider exceptions. */
  providerConcurrency?: { default: number; overrides: Record<string, number> };
}
