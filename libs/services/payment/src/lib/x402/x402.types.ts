/**
 * x402 version 2 on the wire, two schemes on EVM networks: `exact` (an EIP-3009 `transferWithAuthorization` of the
 * price, signed as EIP-712 typed data) and `upto` (a Permit2 `permitWitnessTransferFrom` of at most the maximum, settled
 * later for the amount used: metered tools).
 * Agents see `PaymentRequired` in `_meta["x402/paymentRequired"]`, send a
 * `PaymentPayload` in the request's `_meta["x402/payment"]`, and get the
 * `SettleResponse` back in `_meta["x402/payment-response"]`.
 */
export interface PaymentRequirements {
  scheme: 'exact' | 'upto' | 'mpp' | 'mpp-authorize';
  /** CAIP-2 network id, e.g. `eip155:84532` (Base Sepolia). */
  network: string;
  /** Atomic units of `asset` (the token's minor units), as a decimal string. */
  amount: string;
  /** The token contract (EIP-712 verifying contract). */
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  /** `upto` adds `assetTransferMethod: 'permit2'` and the facilitator's address the payer signs into the witness. */
  extra: { name: string; version: string; assetCode: string; assetTransferMethod?: string; facilitatorAddress?: string };
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

/** The `upto` scheme's Permit2 authorization (`@x402/evm`'s shape): at most `permitted.amount`, through `witness.facilitator` only. */
export interface UptoPermit2Authorization {
  from: string;
  permitted: { token: string; amount: string };
  spender: string;
  /** Permit2's unordered nonce, a uint256 as a decimal string. */
  nonce: string;
  deadline: string;
  witness: { to: string; facilitator: string; validAfter: string };
}

export interface PaymentPayload {
  x402Version: 2;
  resource?: PaymentRequired['resource'];
  accepted: PaymentRequirements;
  /** `exact` carries `authorization`, `upto` carries `permit2Authorization` instead (checked before either is read). */
  payload: { signature: string; authorization: ExactEvmAuthorization; permit2Authorization?: UptoPermit2Authorization };
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
  /** The exact scheme pays the price, no more and no less; upto authorizes exactly the maximum asked. */
  | 'amount_mismatch'
  /** upto: the authorization names another facilitator than ours (it could settle only through that one). */
  | 'facilitator_mismatch'
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
  /** Empty for an `upto` authorization not collected yet, and for one collected for 0 (nothing goes on chain). */
  transaction: string;
  network: string;
  /** `upto`: what the hold may reach (the authorized maximum), told to the agent when the call is answered. */
  scheme?: 'exact' | 'upto';
  authorized?: string;
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
  /**
   * The address this facilitator settles `upto` authorizations from (its `/supported` extra); undefined: it offers no
   * upto, or (without `wait`) it is not known yet — callers inside a transaction never wait on the facilitator.
   */
  uptoAddress(network: string, wait?: boolean): Promise<string | undefined>;
  verify(payment: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyOutcome>;
  /** The payload carries its payment-identifier (`extensions["payment-identifier"]`), so asking again never settles twice. */
  settle(payment: PaymentPayload, requirements: PaymentRequirements): Promise<SettleOutcome>;
}

export const X402_FACILITATOR = Symbol('X402_FACILITATOR');
