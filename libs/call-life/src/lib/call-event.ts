/**
 * The facts of a call's life as the model reads them: the payload fields of the contracts' events (structurally the
 * same objects — a service passes the decoded payload as it is), without their validation decorators, so that this
 * library stays pure.
 */
export interface Amount {
  /** Integer minor units, as a decimal string (money never travels as a float). */
  amountMinor: string;
  asset: string;
}

/**
 * A metered price (the call's `price` is then its maximum, what is held): so much per unit of work the provider
 * names, at least `minimumMinor` when given. Integer minor units as decimal strings.
 */
export interface MeteredPrice {
  unit: string;
  unitPriceMinor: string;
  minimumMinor?: string;
}

/**
 * What the provider reported it used, as execution read it from the result: a whole number of units of the price's
 * unit, or why no usable report came (`missing`, `malformed`, `negative`, `wrong_unit`).
 */
export interface UsageReport {
  unit?: string;
  units?: string;
  problem?: 'missing' | 'malformed' | 'negative' | 'wrong_unit';
}

export interface CallRequestedFact {
  intentId: string;
  ownerId: string;
  agentId: string;
  mcpUrlId?: string;
  toolId: string;
  toolName?: string;
  price: Amount;
  operationKey?: string;
  deadlineAt: string;
  freeCallsPerDay?: number;
  x402Payment?: Record<string, unknown>;
  mppCredential?: Record<string, unknown>;
  /** The agent asked to hear the provider's progress. */
  progress?: boolean;
  /** The tool is priced by use: `price` is the most the call may cost. */
  metered?: MeteredPrice;
}

export interface PaymentHeldFact {
  intentId: string;
  holdId: string;
  ownerId: string;
  amount: Amount;
  free?: boolean;
  x402PaymentResponse?: Record<string, unknown>;
  mppReceipt?: Record<string, unknown>;
  /** Priced by use: `amount` is the maximum. */
  metered?: MeteredPrice;
}

export interface PaymentRejectedFact {
  intentId: string;
  code: string;
  message: string;
  retryable: boolean;
  retryAfterMs?: number;
  details?: Record<string, unknown>;
  x402PaymentRequired?: Record<string, unknown>;
  mppPaymentRequired?: Record<string, unknown>;
  final?: boolean;
}

/** The agent asked to cancel (tasks/cancel); execution honours it only before anything was sent. */
export interface CallCancelRequestedFact {
  intentId: string;
  agentId: string;
  requestedAt: string;
}

export interface CallDispatchedFact {
  intentId: string;
  attempt: number;
  providerId: string;
  bindingId?: string;
  upstreamToolName?: string;
  deadlineAt?: string;
}

export interface UpstreamResult {
  content: Record<string, unknown>[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
}

export interface ResultReceivedFact {
  intentId: string;
  attempt: number;
  providerId: string;
  outcome: string;
  classification: string;
  resultDigest: string;
  result: UpstreamResult;
  /** A metered call: what the provider reported it used. */
  usage?: UsageReport;
}

export interface OutcomeUnknownFact {
  intentId: string;
  attempt: number;
  providerId: string;
  reason: string;
  detail: string;
}

export interface EffectConfirmedFact {
  intentId: string;
  attempt: number;
  method: string;
  providerId?: string;
  /** A metered call: the usage the confirmed result reported. */
  usage?: UsageReport;
}

export interface EffectRejectedFact {
  intentId: string;
  attempt: number;
  code: string;
  reason: string;
  difference?: Record<string, unknown>;
  /** The client capabilities a provider required and the gateway does not offer (its -32021). */
  requiredCapabilities?: Record<string, unknown>;
}

export interface CallSettledFact {
  intentId: string;
  holdId: string;
  providerId: string;
  amount: Amount;
  ownerId?: string;
  fee?: Amount;
  providerNet?: Amount;
  /** A metered call: how the charge was computed. */
  usage?: MeteredPrice & { units?: string; flag?: string };
}

export interface CallRefundedFact {
  intentId: string;
  holdId: string;
  amount: Amount;
  reason: string;
  ownerId?: string;
}

/** Every event of a call's life, by its contract name. */
export interface CallFacts {
  CallRequested: CallRequestedFact;
  PaymentHeld: PaymentHeldFact;
  PaymentRejected: PaymentRejectedFact;
  CallCancelRequested: CallCancelRequestedFact;
  CallDispatched: CallDispatchedFact;
  ResultReceived: ResultReceivedFact;
  OutcomeUnknown: OutcomeUnknownFact;
  EffectConfirmed: EffectConfirmedFact;
  EffectRejected: EffectRejectedFact;
  CallSettled: CallSettledFact;
  CallRefunded: CallRefundedFact;
}

export type CallEventType = keyof CallFacts;

export const CALL_EVENT_TYPES: readonly CallEventType[] = [
  'CallRequested', 'PaymentHeld', 'PaymentRejected', 'CallCancelRequested', 'CallDispatched', 'ResultReceived',
  'OutcomeUnknown', 'EffectConfirmed', 'EffectRejected', 'CallSettled', 'CallRefunded',
];

export type CallEvent = { [T in CallEventType]: { type: T; payload: CallFacts[T] } }[CallEventType];

export function isCallEventType(type: string): type is CallEventType {
  return (CALL_EVENT_TYPES as readonly string[]).includes(type);
}

/** A call event from a contract name and a decoded payload (the payload is used as it is). */
export function callEvent<T extends CallEventType>(type: T, payload: CallFacts[T]): CallEvent {
  return { type, payload } as CallEvent;
}
