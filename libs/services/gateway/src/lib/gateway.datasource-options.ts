import { serviceDataSourceOptions } from '@tollgate/persistence';
import { type DataSourceOptions } from 'typeorm';
import { GatewayInit1764680000000 } from './migrations/1764680000000-gateway-init.migration';
import { GatewayDiscoverySurface1764700000000 } from './migrations/1764700000000-gateway-discovery-surface.migration';
import { GatewayAccessPolicy1764710000000 } from './migrations/1764710000000-gateway-access-policy.migration';
import { GatewayDeviceSignIn1764720000000 } from './migrations/1764720000000-gateway-device-sign-in.migration';
import { GatewayOperationKeys1764730000000 } from './migrations/1764730000000-gateway-operation-keys.migration';
import { GatewayCallAttempts1764740000000 } from './migrations/1764740000000-gateway-call-attempts.migration';
import { GatewayReceipts1764750000000 } from './migrations/1764750000000-gateway-receipts.migration';
import { GatewayParkedEvents1764770000000 } from './migrations/1764770000000-gateway-parked-events.migration';
import { GatewayCallOutcomeNotify1764780000000 } from './migrations/1764780000000-gateway-call-outcome-notify.migration';
import { GatewayRetention1764790000000 } from './migrations/1764790000000-gateway-retention.migration';
import { GatewayToolEmbeddings1764800000000 } from './migrations/1764800000000-gateway-tool-embeddings.migration';
import { GATEWAY } from './gateway.constants';
import { GatewayOutboxHeaders1764840000000 } from './migrations/1764840000000-gateway-outbox-headers.migration';
import { GatewayCallLife1764860000000 } from './migrations/1764860000000-gateway-call-life.migration';
import { GatewayParkedAnswer1764930000000 } from './migrations/1764930000000-gateway-parked-answer.migration';
import { GatewayLeanCall1764940000000 } from './migrations/1764940000000-gateway-lean-call.migration';
import { GatewayOutboxLease1764960000000 } from './migrations/1764960000000-gateway-outbox-lease.migration';
import { GatewayOAuth1764970000000 } from './migrations/1764970000000-gateway-oauth.migration';
import { GatewayOAuthRefreshReuse1764980000000 } from './migrations/1764980000000-gateway-oauth-refresh-reuse.migration';

export function gatewayDataSourceOptions(url: string): DataSourceOptions {
  return serviceDataSourceOptions({ name: GATEWAY, schema: GATEWAY, url, entities: [], migrations: [GatewayInit1764680000000, GatewayDiscoverySurface1764700000000, GatewayAccessPolicy1764710000000, GatewayDeviceSignIn1764720000000, GatewayOperationKeys1764730000000, GatewayCallAttempts1764740000000, GatewayReceipts1764750000000, GatewayParkedEvents1764770000000, GatewayCallOutcomeNotify1764780000000, GatewayRetention1764790000000, GatewayToolEmbeddings1764800000000, GatewayOutboxHeaders1764840000000, GatewayCallLife1764860000000, GatewayParkedAnswer1764930000000, GatewayLeanCall1764940000000, GatewayOutboxLease1764960000000, GatewayOAuth1764970000000, GatewayOAuthRefreshReuse1764980000000] });
}
