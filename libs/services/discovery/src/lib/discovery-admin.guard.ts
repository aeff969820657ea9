import { adminTokenGuard } from '@tollgate/http';
import { DISCOVERY_OPTIONS } from './discovery.constants';

export const DiscoveryAdminGuard = adminTokenGuard(DISCOVERY_OPTIONS);
