export * from './lib/payment.module';
export * from './lib/payment.datasource-options';
export { PAYMENT } from './lib/payment.constants';
export * from './lib/payment-app.config';
