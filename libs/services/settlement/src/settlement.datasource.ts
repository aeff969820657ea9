// The DataSource the TypeORM CLI uses; NestJS builds its own from the same options.
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { settlementDataSourceOptions } from './lib/settlement.datasource-options';

export default new DataSource(settlementDataSourceOptions(process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/tollgate'));
