import { serviceDataSourceOptions } from '@tollgate/persistence';
import { type DataSourceOptions } from 'typeorm';
import { DiscoveryInit1764680000000 } from './migrations/1764680000000-discovery-init.migration';
import { DiscoveryCatalog1764700000000 } from './migrations/1764700000000-discovery-catalog.migration';
import { DiscoveryParkedEvents1764770000000 } from './migrations/1764770000000-discovery-parked-events.migration';
import { DISCOVERY } from './discovery.constants';
import { DiscoveryOutboxHeaders1764840000000 } from './migrations/1764840000000-discovery-outbox-headers.migration';
import { DiscoveryParkedAnswer1764930000000 } from './migrations/1764930000000-discovery-parked-answer.migration';
import { DiscoveryTaskSupport1765000000000 } from './migrations/1765000000000-discovery-task-support.migration';
import { DiscoveryOutboxLease1764960000000 } from './migrations/1764960000000-discovery-outbox-lease.migration';

export function discoveryDataSourceOptions(url: string): DataSourceOptions {
  return serviceDataSourceOptions({ name: DISCOVERY, schema: DISCOVERY, url, entities: [], migrations: [DiscoveryInit1764680000000, DiscoveryCatalog1764700000000, DiscoveryParkedEvents1764770000000, DiscoveryOutboxHeaders1764840000000, DiscoveryParkedAnswer1764930000000, DiscoveryOutboxLease1764960000000, DiscoveryTaskSupport1765000000000] });
}
