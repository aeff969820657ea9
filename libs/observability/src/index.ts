export * from './lib/log-context';
export * from './lib/logger';
export * from './lib/nest-logger';
export * from './lib/health/health-registry.service';
export * from './lib/health/health.module';
export * from './lib/metrics/metrics';
export { mayScrape } from './lib/metrics/metrics.controller';
export * from './lib/tracing/tracing';
