import { type ServiceRuntimeOptions } from '@tollgate/config';
import { type UpstreamCredentials } from '@tollgate/mcp-runtime';

export interface DiscoveryOptions extends ServiceRuntimeOptions {
  adminToken: string;
  /** Every provider is re-synced this often (ms); 0 turns the schedule off (list_changed and on-demand syncs still run). */
  syncIntervalMs: number;
  /** Tokens presented to providers, by origin (never on the bus or in the catalog). */
  upstreamCredentials?: UpstreamCredentials;
}
