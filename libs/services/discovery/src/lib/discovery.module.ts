import { type DynamicModule, Module } from '@nestjs/common';
import { useUpstreamCredentials } from '@tollgate/mcp-runtime';
import { outboxWriterProvider } from '@tollgate/messaging';
import { serviceDatabaseModule } from '@tollgate/persistence';
import { PublishToolService } from './catalog/publish-tool.service';
import { DISCOVERY, DISCOVERY_OPTIONS, DISCOVERY_OUTBOX } from './discovery.constants';
import { discoveryDataSourceOptions } from './discovery.datasource-options';
import { DiscoveryEventsHost } from './discovery-events.host';
import { type DiscoveryOptions } from './discovery.options';
import { ProvidersController } from './register-provider/providers.controller';
import { RegisterProviderUseCase } from './register-provider/register-provider.usecase';
import { ToolsController } from './review-tool/tools.controller';
import { ReviewToolUseCase } from './review-tool/review-tool.usecase';
import { SyncProviderUseCase } from './sync-provider/sync-provider.usecase';
import { ProviderSyncScheduler } from './watch-providers/provider-sync.scheduler';

/** Discovery: providers, tool contracts and versions, bindings. Emits CatalogToolChanged (compacted topic). */
@Module({})
export class DiscoveryModule {
  static register(options: DiscoveryOptions): DynamicModule {
    useUpstreamCredentials(options.upstreamCredentials);
    return {
      module: DiscoveryModule,
      imports: [serviceDatabaseModule(DISCOVERY, () => discoveryDataSourceOptions(options.databaseUrl))],
      controllers: [ProvidersController, ToolsController],
      providers: [
        { provide: DISCOVERY_OPTIONS, useValue: options },
        outboxWriterProvider(DISCOVERY_OUTBOX, DISCOVERY),
        PublishToolService,
        SyncProviderUseCase,
        RegisterProviderUseCase,
        ReviewToolUseCase,
        ProviderSyncScheduler,
        DiscoveryEventsHost,
      ],
      exports: [RegisterProviderUseCase, SyncProviderUseCase],
    };
  }
}
