import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { kafkaBrokerList, loadConfig } from '@tollgate/config';
import { startNestApp } from '@tollgate/http';
import { EventTransportModule, KafkaTransport } from '@tollgate/messaging';
import { createLogger, HealthModule } from '@tollgate/observability';
import { PaymentAppConfig, PaymentModule } from '@tollgate/payment-service';


/** Distributed mode: the payment service as its own process, on Kafka and PostgreSQL. */
async function main(): Promise<void> {
  const config = loadConfig(PaymentAppConfig);
  const transport = new KafkaTransport({ clientId: 'tollgate-payment', brokers: kafkaBrokerList(config.KAFKA_BROKERS), topicPrefix: config.KAFKA_TOPIC_PREFIX, logger: createLogger('payment') });

  @Module({
    imports: [
      EventTransportModule.forRoot(transport),
      HealthModule,
      PaymentModule.register(config.toOptions()),
    ],
  })
  class PaymentAppModule {}

  await startNestApp({ service: 'payment', module: PaymentAppModule, host: config.HOST, port: config.PORT, requestHeadTimeoutMs: config.HTTP_REQUEST_HEAD_TIMEOUT_MS });
}

main().catch((error) => {
  createLogger('payment').fatal({ err: error }, 'failed to start');
  process.exit(1);
});
