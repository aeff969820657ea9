import type * as Viem from 'viem' with { 'resolution-mode': 'import' };
import { type FacilitatorLedger } from './facilitator-ledger';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { getAddress, isAddress, recoverTypedDataAddress } = require('viem') as typeof Viem;

export interface ExactPayload {
  x402Version: number;
  accepted: { scheme: string; network: string; asset: string };
  payload: { signature: string; authorization: { from: string; to: string; value: string; validAfter: string; validBefore: string; nonce: string } };
  extensions?: Record<string, unknown>;
}

const TYPES = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' }, { name: 'to', type: 'address' }, { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' }, { name: 'validBefore', type: 'uint256' }, { name: 'nonce', type: 'bytes32' },
  ],
} as const;
const UINT = /^(0|[1-9][0-9]{0,77})$/;

/** What a chain-backed facilitator would refuse about this exact-scheme payment (x402's error codes), or undefined. */
export async function problemOf(p: ExactPayload, req: Record<string, unknown>, network: string, ledger: FacilitatorLedger): Promise<string | undefined> {
  const a = p?.payload?.authorization;
  if (p?.x402Version !== 2 || !a || typeof p.payload.signature !== 'string') return 'invalid_payload';
  if (p.accepted?.scheme !== 'exact' || req['scheme'] !== 'exact') return 'unsupported_scheme';
  if (p.accepted.network !== network || req['network'] !== network) return 'invalid_network';
  if (![a.from, a.to].every((x) => typeof x === 'string' && isAddress(x)) || ![a.value, a.validAfter, a.validBefore].every((x) => typeof x === 'string' && UINT.test(x))) return 'invalid_payload';
  if (getAddress(a.to) !== getAddress(String(req['payTo']))) return 'invalid_exact_evm_payload_recipient_mismatch';
  if (BigInt(a.value) !== BigInt(String(req['amount']))) return 'invalid_exact_evm_payload_authorization_value';
  const signer = await recoverTypedDataAddress({
    domain: { name: (req['extra'] as { name: string }).name, version: (req['extra'] as { version: string }).version, chainId: Number(network.split(':')[1]), verifyingContract: getAddress(String(req['asset'])) },
    types: TYPES, primaryType: 'TransferWithAuthorization',
    message: { from: getAddress(a.from), to: getAddress(a.to), value: BigInt(a.value), validAfter: BigInt(a.validAfter), validBefore: BigInt(a.validBefore), nonce: a.nonce as `0x${string}` },
    signature: p.payload.signature as `0x${string}`,
  }).catch(() => undefined);
  if (!signer || getAddress(signer) !== getAddress(a.from)) return 'invalid_exact_evm_payload_signature';
  const now = BigInt(Math.floor(Date.now() / 1000));
  if (BigInt(a.validAfter) > now) return 'invalid_exact_evm_payload_authorization_valid_after';
  if (BigInt(a.validBefore) < now + 6n) return 'invalid_exact_evm_payload_authorization_valid_before';
  if (ledger.state.usedNonces[`${a.from.toLowerCase()}:${a.nonce.toLowerCase()}`]) return 'invalid_exact_evm_payload_authorization_nonce_used';
  if (ledger.balanceOf(a.from) < BigInt(a.value)) return 'insufficient_funds';
  return undefined;
}
