import { type PaymentRefusal } from '@tollgate/call-life';

/** Why payment refuses a call: the agent error's fields, carried by PaymentRejected (the call-life model's payment refusal). */
export type Refusal = PaymentRefusal;
