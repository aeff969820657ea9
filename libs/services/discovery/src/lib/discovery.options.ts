import { type ServiceRuntimeOptions } from '@tollgate/config';

export interface DiscoveryOptions extends ServiceRuntimeOptions {
  adminToken: string;
  /** Every provider is re-synced this often (ms); 0 turns the schedule off (list_changed and on-demand syncs still run). */
  syncIntervalMs: number;
}
