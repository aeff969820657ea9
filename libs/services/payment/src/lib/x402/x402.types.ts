/**
 * x402 version 2 on the wire (the `exact` scheme on EVM networks: an
 * EIP-3009 `transferWithAuthorization` signed as EIP-712 typed data).
 * Agents see `PaymentRequired` in `_meta["x402/paymentRequired"]`, send a
 * `PaymentPayload` in the request's `_meta["x402/payment"]`, and get the
 * `SettleResponse` back in `_meta["x402/payment-response"]`.
 */
export interface PaymentRequirements {
  scheme: 'exact';
  /** CAIP-2 network id, e.g. `eip155:84532` (Base Sepolia). */
  network: string;
  /** Atomic units of `asset` (the token's minor units), as a decimal string. */
  amount: string;
  /** The token contract (EIP-712 verifying contract). */
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra: { name: string; version: string; assetCode: string };
}

export interface PaymentRequired {
  x402Version: 2;
  error: string;
  resource: { url: string; description: string; mimeType: string };
  accepts: PaymentRequirements[];
}

export interface ExactEvmAuthorization {
  from: string;
  to: string;
  value: string;
  validAfter: string;
  validBefore: string;
  nonce: string;
}

export interface PaymentPayload {
  x402Version: 2;
  resource?: PaymentRequired['resource'];
  accepted: PaymentRequirements;
  payload: { signature: string; authorization: ExactEvmAuthorization };
  /** x402 extensions the payload carries; payment sets `payment-identifier` before settling. */
  extensions?: Record<string, unknown>;
}

export type InvalidReason =
  | 'invalid_payload'
  | 'unsupported_scheme'
  | 'invalid_network'
  | 'invalid_signature'
  | 'recipient_mismatch'
  | 'asset_mismatch'
  | 'insufficient_amount'
  /** The exact scheme pays the price, no more and no less. */
  | 'amount_mismatch'
  | 'authorization_not_yet_valid'
  | 'authorization_expired'
  | 'nonce_already_used'
  | 'facilitator_refused'
  | 'facilitator_unavailable';

export interface VerifyResponse {
  isValid: boolean;
  invalidReason?: InvalidReason;
  payer?: string;
}

export interface SettleResponse {
  success: boolean;
  errorReason?: InvalidReason;
  payer?: string;
  transaction: string;
  network: string;
}

/** What a verify call established: valid (and who pays), invalid (with the reason), or nothing (the facilitator did not answer). */
export type VerifyOutcome =
  | { kind: 'valid'; payer?: string }
  | { kind: 'invalid'; reason: string }
  | { kind: 'unavailable'; problem: string };

/**
 * What a settle call established. `unknown` — a timeout, a dropped connection, an answer that is not a verdict — means
 * the transfer may or may not have happened: it is never credited and never refused, only asked again with the same
 * payment identifier until the facilitator says which (x402's payment-identifier extension).
 */
export type SettleOutcome =
  | { kind: 'settled'; response: SettleResponse }
  | { kind: 'refused'; reason: string }
  | { kind: 'unknown'; problem: string };

/** Verify / settle, as an x402 facilitator offers them: the HTTP one in production, the local one in tests and demos. */
export interface X402Facilitator {
  /** How the attempt records which facilitator it used (`local`, or the facilitator's origin). */
  readonly name: string;
  verify(payment: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyOutcome>;
  /** The payload carries its payment-identifier (`extensions["payment-identifier"]`), so asking again never settles twice. */
  settle(payment: PaymentPayload, requirements: PaymentRequirements): Promise<SettleOutcome>;
}

export const X402_FACILITATOR = Symbol('X402_FACILITATOR');
