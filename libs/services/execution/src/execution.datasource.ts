// The DataSource the TypeORM CLI uses; NestJS builds its own from the same options.
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { executionDataSourceOptions } from './lib/execution.datasource-options';

export default new DataSource(executionDataSourceOptions(process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/tollgate'));
