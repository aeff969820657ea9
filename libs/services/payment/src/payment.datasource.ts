// The DataSource the TypeORM CLI uses (`nx run payment-service:typeorm migration:show`); NestJS builds its own from the same options.
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { paymentDataSourceOptions } from './lib/payment.datasource-options';

export default new DataSource(paymentDataSourceOptions(process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/tollgate'));
