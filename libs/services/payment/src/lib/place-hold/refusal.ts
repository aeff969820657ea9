/** Why payment refuses a call: the agent error's fields, carried by PaymentRejected. */
export interface Refusal {
  code: string;
  message: string;
  retryable: boolean;
  retryAfterMs?: number;
  details?: Record<string, unknown>;
  x402PaymentRequired?: Record<string, unknown>;
  /** The answer stands for the call's operation key (see PaymentRejectedPayload.final). */
  final?: boolean;
}
