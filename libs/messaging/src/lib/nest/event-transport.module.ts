import { type DynamicModule, Global, Inject, Module, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { EVENT_TRANSPORT, type EventTransport } from '../transport/event-transport';

class TransportLifecycle implements OnModuleInit, OnApplicationShutdown {
  constructor(@Inject(EVENT_TRANSPORT) private readonly transport: EventTransport) {}
  async onModuleInit(): Promise<void> {
    await this.transport.connect();
  }
  /** Runs after every service's beforeApplicationShutdown (consumers stopped, outbox flushed). */
  async onApplicationShutdown(): Promise<void> {
    await this.transport.close();
  }
}

/** Provides the process's one EventTransport (Kafka or in-process) to every service module. */
@Global()
@Module({})
export class EventTransportModule {
  static forRoot(transport: EventTransport): DynamicModule {
    return {
      module: EventTransportModule,
      providers: [{ provide: EVENT_TRANSPORT, useValue: transport }, TransportLifecycle],
      exports: [EVENT_TRANSPORT],
    };
  }
}
