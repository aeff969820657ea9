import { type VelocityRules } from '@tollgate/accounting';
import { type ServiceRuntimeOptions } from '@tollgate/config';

/** Where agents without a prepaid balance pay per call with x402 (one network here; the local facilitator verifies). */
export interface X402Settings {
  /** CAIP-2 id of the one network payments settle on, e.g. `eip155:84532`. */
  network: string;
  /** The token contract agents sign for (EIP-712 verifying contract). */
  assetAddress: string;
  /** The asset code that token is in the ledger (its atomic units are our minor units). */
  assetCode: string;
  /** EIP-712 domain name and version of the token. */
  tokenName: string;
  tokenVersion: string;
  payTo: string;
  maxTimeoutSeconds: number;
  /** How long an `upto` authorization stays valid: it is collected after the effect is confirmed, so longer than `exact`'s. */
  uptoMaxTimeoutSeconds: number;
}

/**
 * Who verifies and settles x402 payments. `off` (the default): x402 is not offered and a payment sent anyway is
 * refused. `http`: a facilitator that verifies **and settles on chain** (the x402 facilitator HTTP API, `POST /verify`
 * and `POST /settle`). `local`: signatures are checked but nothing is settled anywhere — anyone can sign for money they
 * do not have, so it exists only for tests and demos and the distributed apps refuse it unless explicitly allowed.
 */
export type X402FacilitatorSetting =
  | { kind: 'off' }
  | { kind: 'local' }
  /** `chainRpcUrl`: the chain's JSON-RPC, which every settlement is checked against (the facilitator's word is a claim). */
  | { kind: 'http'; url: string; timeoutMs: number; token?: string; chainRpcUrl: string; chainLookbackBlocks: bigint };

/** MPP beside x402: off, or the sandbox method (its backend's URL, the challenge secret, the realm). */
export type MppSetting =
  | { kind: 'off' }
  | { kind: 'sandbox'; url: string; token?: string; secretKey: string; realm: string; timeoutMs: number };

export interface PaymentOptions extends ServiceRuntimeOptions {
  /** Bearer token of the payment admin API (wallets, spend policies, approvals); without one the API refuses every call. */
  adminToken?: string;
  velocity: VelocityRules;
  x402: X402Settings;
  x402Facilitator: X402FacilitatorSetting;
  /** Absent: off. */
  mpp?: MppSetting;
  /** How the x402 settlement worker retries (ms): back-off from `baseMs` doubling to `maxMs`; due attempts polled every `pollMs`. */
  x402Retry?: { baseMs?: number; maxMs?: number; pollMs?: number };
}

/** Defaults shared by the distributed app's config and the embedded host. */
export const DEFAULT_X402: X402Settings = {
  network: 'eip155:84532',
  assetAddress: '0x036CbD53842c5426634e7929541eC2318f3dCF7e',
  assetCode: 'USDC',
  tokenName: 'USDC',
  tokenVersion: '2',
  payTo: '0x1111111111111111111111111111111111111111',
  maxTimeoutSeconds: 60,
  uptoMaxTimeoutSeconds: 3600,
};

/** Platform velocity rules unless configured otherwise. */
export const DEFAULT_VELOCITY: VelocityRules = { maxCallsPerMinute: 600, maxSpendPerMinuteMinor: 1_000_000_000n, maxRepeats: 30, repeatWindowMs: 10_000 };
