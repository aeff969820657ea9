import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { EVENT_TRANSPORT, type EventTransport, ServiceEventsHost, serviceEventsSettings } from '@tollgate/messaging';
import { HealthRegistry } from '@tollgate/observability';
import { DISCOVERY, DISCOVERY_OPTIONS } from './discovery.constants';
import { type DiscoveryOptions } from './discovery.options';
import { ProviderSyncScheduler } from './watch-providers/provider-sync.scheduler';

/** Discovery only publishes (the catalog topic); its background work is the provider sync schedule. */
@Injectable()
export class DiscoveryEventsHost extends ServiceEventsHost {
  constructor(
    @InjectDataSource(DISCOVERY) dataSource: DataSource,
    @Inject(EVENT_TRANSPORT) transport: EventTransport,
    @Inject(DISCOVERY_OPTIONS) options: DiscoveryOptions,
    health: HealthRegistry,
    private readonly scheduler: ProviderSyncScheduler,
  ) {
    super(serviceEventsSettings(DISCOVERY, { dataSource, transport, health, options }));
  }

  protected consumers() {
    return [];
  }

  protected override async startBackground(): Promise<void> {
    this.scheduler.start();
  }

  protected override async stopBackground(): Promise<void> {
    await this.scheduler.stop();
  }
}
