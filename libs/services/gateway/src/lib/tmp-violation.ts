import { PaymentModule } from "@tollgate/payment-service"; export const x = PaymentModule;
