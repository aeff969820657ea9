import { type ServiceRuntimeOptions } from '@tollgate/config';

export interface LedgerOptions extends ServiceRuntimeOptions {
  /**
   * Bearer token of the ledger's admin API (issuing and revoking finance tokens). It also reads the finance API as an
   * operator. Without one the admin API refuses every call.
   */
  adminToken?: string;
  /** How long (ms) events are gathered before they are projected together (default 200). */
  lingerMs?: number;
}
