import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { IsInt, IsString, Max, Min } from 'class-validator';
import { EnvVar, loadConfig } from '@tollgate/config';
import { startNestApp } from '@tollgate/http';
import { createLogger } from '@tollgate/observability';
import { SampleProvidersModule } from '@tollgate/sample-providers-service';

class SampleProvidersConfig {
  @EnvVar({ description: 'HTTP port of the sample providers.' }) @IsInt() @Min(1) @Max(65535) PORT = 3100;
  @EnvVar({ description: 'Address the HTTP server binds to.' }) @IsString() HOST = '127.0.0.1';
}

@Module({ imports: [SampleProvidersModule] })
class SampleProvidersAppModule {}

async function main(): Promise<void> {
  const config = loadConfig(SampleProvidersConfig);
  await startNestApp({ service: 'sample-providers', module: SampleProvidersAppModule, host: config.HOST, port: config.PORT });
}

main().catch((error) => {
  createLogger('sample-providers').fatal({ err: error }, 'failed to start');
  process.exit(1);
});
