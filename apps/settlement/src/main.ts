import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { kafkaBrokerList, loadConfig } from '@tollgate/config';
import { startNestApp } from '@tollgate/http';
import { EventTransportModule, KafkaTransport } from '@tollgate/messaging';
import { createLogger, HealthModule } from '@tollgate/observability';
import { SettlementAppConfig, SettlementModule } from '@tollgate/settlement-service';


/** Distributed mode: the settlement service as its own process, on Kafka and PostgreSQL. */
async function main(): Promise<void> {
  const config = loadConfig(SettlementAppConfig);
  const transport = new KafkaTransport({ clientId: 'tollgate-settlement', brokers: kafkaBrokerList(config.KAFKA_BROKERS), topicPrefix: config.KAFKA_TOPIC_PREFIX, logger: createLogger('settlement') });

  @Module({
    imports: [
      EventTransportModule.forRoot(transport),
      HealthModule,
      SettlementModule.register({ databaseUrl: config.DATABASE_URL, outboxPollIntervalMs: config.OUTBOX_POLL_INTERVAL_MS, verificationWindowMs: config.SETTLEMENT_VERIFICATION_WINDOW_MS, sweepIntervalMs: config.SETTLEMENT_SWEEP_INTERVAL_MS,
        feeBps: config.SETTLEMENT_TAKE_RATE_BPS, ...(config.SETTLEMENT_ADMIN_TOKEN ? { adminToken: config.SETTLEMENT_ADMIN_TOKEN } : {}) }),
    ],
  })
  class SettlementAppModule {}

  await startNestApp({ service: 'settlement', module: SettlementAppModule, host: config.HOST, port: config.PORT, requestHeadTimeoutMs: config.HTTP_REQUEST_HEAD_TIMEOUT_MS });
}

main().catch((error) => {
  createLogger('settlement').fatal({ err: error }, 'failed to start');
  process.exit(1);
});
