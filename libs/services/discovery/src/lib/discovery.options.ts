import { type ServiceRuntimeOptions } from '@tollgate/config';

export interface DiscoveryOptions extends ServiceRuntimeOptions {
  adminToken: string;
}
