import { Global, Module } from '@nestjs/common';
import { HealthController } from './health.controller';
import { HealthRegistry } from './health-registry.service';
import { MetricsController } from '../metrics/metrics.controller';

/** Health (`/health/live`, `/health/ready`) and Prometheus metrics (`/metrics`) of the process. */
@Global()
@Module({ controllers: [HealthController, MetricsController], providers: [HealthRegistry], exports: [HealthRegistry] })
export class HealthModule {}
