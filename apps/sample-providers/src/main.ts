import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { loadConfig } from '@tollgate/config';
import { startNestApp } from '@tollgate/http';
import { createLogger, HealthModule } from '@tollgate/observability';
import { SampleProvidersConfig, SampleProvidersModule } from '@tollgate/sample-providers-service';

async function main(): Promise<void> {
  const config = loadConfig(SampleProvidersConfig);
  @Module({ imports: [HealthModule, SampleProvidersModule.register({ adminToken: config.SAMPLE_PROVIDERS_TOKEN, maxSessions: config.SAMPLE_PROVIDERS_MAX_SESSIONS, sessionIdleMs: config.SAMPLE_PROVIDERS_SESSION_IDLE_MS })] })
  class SampleProvidersAppModule {}
  await startNestApp({ service: 'sample-providers', module: SampleProvidersAppModule, host: config.HOST, port: config.PORT });
}

main().catch((error) => {
  createLogger('sample-providers').fatal({ err: error }, 'failed to start');
  process.exit(1);
});
