export * from './lib/settlement.module';
export * from './lib/settlement.options';
export * from './lib/settlement.datasource-options';
export { SETTLEMENT } from './lib/settlement.constants';
export * from './lib/settlement-app.config';
