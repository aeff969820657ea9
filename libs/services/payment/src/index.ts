export * from './lib/payment.module';
export * from './lib/payment.datasource-options';
export { PAYMENT } from './lib/payment.constants';
export * from './lib/payment-app.config';
export * from './lib/payment.options';
export type { PaymentPayload, PaymentRequired, PaymentRequirements, SettleResponse } from './lib/x402/x402.types';
export { WithX402Config, x402FacilitatorOf } from './lib/x402/x402.config';
export { WithMppConfig } from './lib/mpp/mpp.config';
