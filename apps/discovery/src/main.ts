import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { kafkaBrokerList, loadConfig } from '@tollgate/config';
import { startNestApp } from '@tollgate/http';
import { EventTransportModule, KafkaTransport } from '@tollgate/messaging';
import { parseUpstreamCredentials } from '@tollgate/mcp-runtime';
import { createLogger, HealthModule } from '@tollgate/observability';
import { DiscoveryAppConfig, DiscoveryModule } from '@tollgate/discovery-service';


/** Distributed mode: the discovery service as its own process, on Kafka and PostgreSQL. */
async function main(): Promise<void> {
  const config = loadConfig(DiscoveryAppConfig);
  const transport = new KafkaTransport({ clientId: 'tollgate-discovery', brokers: kafkaBrokerList(config.KAFKA_BROKERS), topicPrefix: config.KAFKA_TOPIC_PREFIX, logger: createLogger('discovery') });

  @Module({
    imports: [
      EventTransportModule.forRoot(transport),
      HealthModule,
      DiscoveryModule.register({ databaseUrl: config.DATABASE_URL, outboxPollIntervalMs: config.OUTBOX_POLL_INTERVAL_MS, adminToken: config.DISCOVERY_ADMIN_TOKEN, syncIntervalMs: config.DISCOVERY_SYNC_INTERVAL_MS,
        upstreamCredentials: parseUpstreamCredentials(config.UPSTREAM_CREDENTIALS) }),
    ],
  })
  class DiscoveryAppModule {}

  await startNestApp({ service: 'discovery', module: DiscoveryAppModule, host: config.HOST, port: config.PORT, requestHeadTimeoutMs: config.HTTP_REQUEST_HEAD_TIMEOUT_MS,
    openApi: { title: 'Tollgate discovery admin API', description: 'Providers, catalog tools, contract versions and their approval.' } });
}

main().catch((error) => {
  createLogger('discovery').fatal({ err: error }, 'failed to start');
  process.exit(1);
});
