import { type DynamicModule } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { type DataSourceOptions } from 'typeorm';
import { openServiceDataSource } from '../service-data-source';

/**
 * The NestJS side of a service's DataSource: named after the service (so
 * several services can share one process) and opened by the same function
 * the CLI and tests use, which applies pending migrations.
 */
export function serviceDatabaseModule(name: string, options: () => DataSourceOptions): DynamicModule {
  return TypeOrmModule.forRootAsync({
    name,
    useFactory: () => ({ ...options(), name }),
    dataSourceFactory: async (opts) => openServiceDataSource({ ...(opts as DataSourceOptions) }),
  });
}
