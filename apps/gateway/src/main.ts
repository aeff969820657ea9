import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { kafkaBrokerList, loadConfig } from '@tollgate/config';
import { startNestApp } from '@tollgate/http';
import { EventTransportModule, KafkaTransport } from '@tollgate/messaging';
import { createLogger, HealthModule } from '@tollgate/observability';
import { GatewayAppConfig, gatewayBrowserGuard, GatewayModule, mountOAuth, oauthOptions } from '@tollgate/gateway-service';


/** Distributed mode: the gateway service as its own process, on Kafka and PostgreSQL. */
async function main(): Promise<void> {
  const config = loadConfig(GatewayAppConfig);
  const transport = new KafkaTransport({ clientId: 'tollgate-gateway', brokers: kafkaBrokerList(config.KAFKA_BROKERS), topicPrefix: config.KAFKA_TOPIC_PREFIX, logger: createLogger('gateway') });

  @Module({
    imports: [
      EventTransportModule.forRoot(transport),
      HealthModule,
      GatewayModule.register({ databaseUrl: config.DATABASE_URL, outboxPollIntervalMs: config.OUTBOX_POLL_INTERVAL_MS, adminToken: config.GATEWAY_ADMIN_TOKEN, callWaitMs: config.GATEWAY_CALL_WAIT_MS, callRecheckMs: config.GATEWAY_CALL_RECHECK_MS, callDeadlineMs: config.GATEWAY_CALL_DEADLINE_MS,
        cursorSecret: config.GATEWAY_CURSOR_SECRET ?? `derived:${config.GATEWAY_ADMIN_TOKEN}`, catalogPollMs: config.GATEWAY_CATALOG_POLL_MS,
        policyTimeoutMs: config.GATEWAY_POLICY_TIMEOUT_MS, signInTtlMs: config.GATEWAY_SIGNIN_TTL_MS, oauth: oauthOptions(config, config.HOST),
        searchRanking: config.GATEWAY_SEARCH_RANKING, searchModelDir: config.GATEWAY_SEARCH_MODEL_DIR, ...(config.GATEWAY_POLICY_ROOT ? { policyRoot: config.GATEWAY_POLICY_ROOT } : {}) }),
    ],
  })
  class GatewayAppModule {}

  await startNestApp({ service: 'gateway', module: GatewayAppModule, host: config.HOST, port: config.PORT, requestHeadTimeoutMs: config.HTTP_REQUEST_HEAD_TIMEOUT_MS, trustedProxies: config.GATEWAY_TRUSTED_PROXIES,
    browserGuard: gatewayBrowserGuard(config.GATEWAY_ALLOWED_HOSTS), mount: mountOAuth });
}

main().catch((error) => {
  createLogger('gateway').fatal({ err: error }, 'failed to start');
  process.exit(1);
});
