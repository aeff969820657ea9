import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { kafkaBrokerList, loadConfig } from '@tollgate/config';
import { startNestApp } from '@tollgate/http';
import { EventTransportModule, KafkaTransport } from '@tollgate/messaging';
import { createLogger, HealthModule } from '@tollgate/observability';
import { LedgerAppConfig, LedgerModule } from '@tollgate/ledger-service';


/** Distributed mode: the ledger service as its own process, on Kafka and PostgreSQL. */
async function main(): Promise<void> {
  const config = loadConfig(LedgerAppConfig);
  const transport = new KafkaTransport({ clientId: 'tollgate-ledger', brokers: kafkaBrokerList(config.KAFKA_BROKERS), topicPrefix: config.KAFKA_TOPIC_PREFIX, logger: createLogger('ledger') });

  @Module({
    imports: [
      EventTransportModule.forRoot(transport),
      HealthModule,
      LedgerModule.register(config.toOptions()),
    ],
  })
  class LedgerAppModule {}

  await startNestApp({ service: 'ledger', module: LedgerAppModule, host: config.HOST, port: config.PORT, requestHeadTimeoutMs: config.HTTP_REQUEST_HEAD_TIMEOUT_MS, openApi: { title: 'Tollgate ledger', description: 'Finance API (finance tokens) and its admin API.' } });
}

main().catch((error) => {
  createLogger('ledger').fatal({ err: error }, 'failed to start');
  process.exit(1);
});
