import { type DynamicModule, Module } from '@nestjs/common';
import { OutboxWriter } from '@tollgate/messaging';
import { serviceDatabaseModule } from '@tollgate/persistence';
import { DISCOVERY, DISCOVERY_OPTIONS, DISCOVERY_OUTBOX } from './discovery.constants';
import { discoveryDataSourceOptions } from './discovery.datasource-options';
import { DiscoveryEventsHost } from './discovery-events.host';
import { type DiscoveryOptions } from './discovery.options';
import { ProvidersController } from './register-provider/providers.controller';
import { RegisterProviderUseCase } from './register-provider/register-provider.usecase';

/** Discovery: providers, tool contracts and versions. Emits CatalogToolChanged (compacted topic). */
@Module({})
export class DiscoveryModule {
  static register(options: DiscoveryOptions): DynamicModule {
    return {
      module: DiscoveryModule,
      imports: [serviceDatabaseModule(DISCOVERY, () => discoveryDataSourceOptions(options.databaseUrl))],
      controllers: [ProvidersController],
      providers: [
        { provide: DISCOVERY_OPTIONS, useValue: options },
        { provide: DISCOVERY_OUTBOX, useValue: new OutboxWriter(DISCOVERY, DISCOVERY) },
        RegisterProviderUseCase,
        DiscoveryEventsHost,
      ],
    };
  }
}
