// The DataSource the TypeORM CLI uses; NestJS builds its own from the same options.
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { ledgerDataSourceOptions } from './lib/ledger.datasource-options';

export default new DataSource(ledgerDataSourceOptions(process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/tollgate'));
