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

/** Verify / settle, as an x402 facilitator offers them: the HTTP one in production, the local one in tests and demos. */
export interface X402Facilitator {
  verify(payment: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyResponse>;
  settle(payment: PaymentPayload, requirements: PaymentRequirements): Promise<SettleResponse>;
}

export const X402_FACILITATOR = Symbol('X402_FACILITATOR');
