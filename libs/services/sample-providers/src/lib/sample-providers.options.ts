export const SAMPLE_PROVIDERS_OPTIONS = Symbol('SAMPLE_PROVIDERS_OPTIONS');

export interface SampleProvidersOptions {
  /** Every request (MCP and test knobs) must carry `Authorization: Bearer <adminToken>`. */
  adminToken: string;
  /** Sessions of the session-keeping provider open at once; an `initialize` beyond it is refused (503). */
  maxSessions: number;
  /** A session without a request for this long (ms) is closed. */
  sessionIdleMs: number;
}
