import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { kafkaBrokerList, loadConfig } from '@tollgate/config';
import { startNestApp } from '@tollgate/http';
import { EventTransportModule, KafkaTransport } from '@tollgate/messaging';
import { parseUpstreamCredentials } from '@tollgate/mcp-runtime';
import { createLogger, HealthModule } from '@tollgate/observability';
import { ExecutionAppConfig, ExecutionModule, providerConcurrency } from '@tollgate/execution-service';


/** Distributed mode: the execution service as its own process, on Kafka and PostgreSQL. */
async function main(): Promise<void> {
  const config = loadConfig(ExecutionAppConfig);
  const transport = new KafkaTransport({ clientId: 'tollgate-execution', brokers: kafkaBrokerList(config.KAFKA_BROKERS), topicPrefix: config.KAFKA_TOPIC_PREFIX, logger: createLogger('execution') });

  @Module({
    imports: [
      EventTransportModule.forRoot(transport),
      HealthModule,
      ExecutionModule.register({
        databaseUrl: config.DATABASE_URL, outboxPollIntervalMs: config.OUTBOX_POLL_INTERVAL_MS, reconcileIntervalMs: config.EXECUTION_RECONCILE_INTERVAL_MS, stallGraceMs: config.EXECUTION_STALL_GRACE_MS,
        providerConcurrency: providerConcurrency(config),
        upstreamCredentials: parseUpstreamCredentials(config.UPSTREAM_CREDENTIALS),
        ...(config.EXECUTION_ADMIN_TOKEN ? { adminToken: config.EXECUTION_ADMIN_TOKEN } : {}),
      }),
    ],
  })
  class ExecutionAppModule {}

  await startNestApp({ service: 'execution', module: ExecutionAppModule, host: config.HOST, port: config.PORT, requestHeadTimeoutMs: config.HTTP_REQUEST_HEAD_TIMEOUT_MS });
}

main().catch((error) => {
  createLogger('execution').fatal({ err: error }, 'failed to start');
  process.exit(1);
});
