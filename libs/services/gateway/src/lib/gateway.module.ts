import { type DynamicModule, Module } from '@nestjs/common';
import { outboxWriterProvider } from '@tollgate/messaging';
import { serviceDatabaseModule } from '@tollgate/persistence';
import { AdminController } from './admin/admin.controller';
import { ManageIdentitiesUseCase } from './admin/manage-identities.usecase';
import { AuthenticateUseCase } from './authenticate/authenticate.usecase';
import { IdentityCache } from './authenticate/identity-cache.service';
import { CallTasksUseCase } from './call-tasks/call-tasks.usecase';
import { CallToolUseCase } from './call-tool/call-tool.usecase';
import { AccessPolicyController } from './access-policy/access-policy.controller';
import { AccessPolicyService } from './access-policy/access-policy.service';
import { PolicyToolsHost } from './access-policy/policy-tools.host';
import { CallWaiters } from './call-tool/call-waiters.service';
import { DeviceSignInUseCase } from './sign-in/device-sign-in.usecase';
import { OwnerKeysController, OwnKeysController, SignInController } from './sign-in/sign-in.controller';
import { CatalogIndex } from './catalog/catalog-index.service';
import { SemanticIndex } from './semantic-search/semantic-index.service';
import { FreeCallsService } from './catalog/free-calls.service';
import { GetToolUseCase } from './get-tool/get-tool.usecase';
import { ListToolsUseCase } from './list-tools/list-tools.usecase';
import { RateLimits } from './rate-limit/rate-limits.service';
import { GatewayRetentionJob } from './retention/gateway-retention.job';
import { SearchToolsUseCase } from './search-tools/search-tools.usecase';
import { GATEWAY, GATEWAY_OPTIONS, GATEWAY_OUTBOX } from './gateway.constants';
import { gatewayDataSourceOptions } from './gateway.datasource-options';
import { GatewayEventsHost } from './gateway-events.host';
import { type GatewayOptions } from './gateway.options';
import { McpController } from './mcp/mcp.controller';
import { McpServers } from './mcp/mcp-servers';
import { OutcomeWorkflow } from './record-outcome/outcome.workflow';
import { SyncCatalogUseCase } from './sync-catalog/sync-catalog.usecase';
import { ConsentController } from './oauth/consent.controller';
import { AdminGrantsController, OAuthGrants, OwnerGrantsController } from './oauth/grants.controller';
import { TollgateOAuthProvider } from './oauth/oauth-provider';
import { OAuthRoutes } from './oauth/oauth-routes';
import { OwnerApproval } from './sign-in/owner-approval';

/** The gateway's services, repositories and jobs (the options and the outbox writer are per registration). */
const GATEWAY_PROVIDERS = [
  ManageIdentitiesUseCase,
  AuthenticateUseCase,
  IdentityCache,
  CallToolUseCase,
  CallTasksUseCase,
  CallWaiters,
  CatalogIndex,
  SemanticIndex,
  AccessPolicyService,
  DeviceSignInUseCase,
  PolicyToolsHost,
  FreeCallsService,
  RateLimits,
  GatewayRetentionJob,
  ListToolsUseCase,
  SearchToolsUseCase,
  GetToolUseCase,
  OutcomeWorkflow,
  SyncCatalogUseCase,
  GatewayEventsHost,
  McpServers,
  OwnerApproval,
  TollgateOAuthProvider,
  OAuthRoutes,
  OAuthGrants,
];

/** Gateway: agents, credentials, MCP URLs, the MCP surface. Emits CallRequested; consumes catalog and call-outcome events. */
@Module({})
export class GatewayModule {
  static register(options: GatewayOptions): DynamicModule {
    return {
      module: GatewayModule,
      imports: [serviceDatabaseModule(GATEWAY, () => gatewayDataSourceOptions(options.databaseUrl))],
      controllers: [McpController, AdminController, AccessPolicyController, SignInController, OwnerKeysController, OwnKeysController, ConsentController, OwnerGrantsController, AdminGrantsController],
      providers: [
        { provide: GATEWAY_OPTIONS, useValue: options },
        outboxWriterProvider(GATEWAY_OUTBOX, GATEWAY),
        ...GATEWAY_PROVIDERS,
      ],
      exports: [ManageIdentitiesUseCase, DeviceSignInUseCase, CatalogIndex, SearchToolsUseCase],
    };
  }
}
