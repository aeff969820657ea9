import { IsBoolean, IsIn, IsInt, IsOptional, IsString, Matches, Max, Min, MinLength } from 'class-validator';
import { EnvVar } from './env-var.decorator';

/** Variables every service reads. Each app's config class extends this one. */
/** What a config mixin extends (`WithX402Config(Base)`, …): the settings one service shares with the embedded host. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- TypeScript's mixin pattern requires any[] constructor arguments.
export type ConfigBase = new (...args: any[]) => object;

export class CommonConfig {
  @EnvVar({ description: 'Bearer token a scrape of /metrics must send (at least 16 characters); unset: /metrics refuses every scrape unless METRICS_OPEN=true.', secret: true, type: 'string' })
  @IsOptional() @IsString() @MinLength(16)
  METRICS_TOKEN?: string;

  @EnvVar({ description: 'Serve /metrics to anyone without a token (only behind a network that keeps strangers out).' })
  @IsBoolean()
  METRICS_OPEN = false;

  @EnvVar({ description: 'PostgreSQL connection URL; each service uses its own schema in this database.' })
  @Matches(/^postgres(ql)?:\/\//, { message: 'must be a postgres:// URL' })
  DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/tollgate';

  @EnvVar({ description: 'Comma-separated Kafka bootstrap brokers (host:port).' })
  @Matches(/^[^,\s]+:\d+(,[^,\s]+:\d+)*$/, { message: 'must be host:port[,host:port...]' })
  KAFKA_BROKERS = '127.0.0.1:9092';

  @EnvVar({ description: 'Optional prefix for every Kafka topic and consumer group (to share one cluster between environments).', example: '' })
  @Matches(/^([a-z0-9][a-z0-9-]*\.)?$/, { message: 'must be empty or like "ci-42."' })
  KAFKA_TOPIC_PREFIX = '';

  @EnvVar({ description: 'Log level: fatal, error, warn, info, debug or trace.' })
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])
  LOG_LEVEL = 'info';

  @EnvVar({ description: 'Log lines: pretty (readable, one line each) or json (one object per line). Unset: pretty on a terminal, json otherwise.', type: 'string', example: '' })
  @IsOptional() @IsIn(['pretty', 'json'])
  LOG_FORMAT?: 'pretty' | 'json';

  @EnvVar({ description: 'Fallback interval (ms) at which the outbox relay polls when no commit notification arrived.' })
  @IsInt() @Min(50) @Max(60_000)
  OUTBOX_POLL_INTERVAL_MS = 1000;

  @EnvVar({ description: 'Address the HTTP server binds to.' })
  @IsString()
  HOST = '127.0.0.1';

  @EnvVar({ description: 'A connection must deliver a complete request head within this many ms, or it is closed (idle and slow clients).' })
  @IsInt() @Min(500) @Max(120_000)
  HTTP_REQUEST_HEAD_TIMEOUT_MS = 10_000;
}

export function kafkaBrokerList(brokers: string): string[] {
  return brokers.split(',').map((b) => b.trim()).filter(Boolean);
}

/** What every service module needs from its host, whichever mode it runs in. */
export interface ServiceRuntimeOptions {
  databaseUrl: string;
  outboxPollIntervalMs: number;
}
