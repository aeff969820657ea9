import { MAX_AMOUNT_MINOR } from '@tollgate/contracts';
import type * as Viem from 'viem' with { 'resolution-mode': 'import' };
import { type AuthorizationQuery, type ChainState, type ChainVerdict } from './chain-state';
import { type InvalidReason, type PaymentPayload, type PaymentRequirements, type SettleOutcome, type VerifyOutcome, type X402Facilitator } from './x402.types';

// viem ships CommonJS beside ESM, but marks its type declarations as ESM: node16 resolution needs the types and the value apart.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { getAddress, isAddress, isHex, keccak256, verifyTypedData } = require('viem') as typeof Viem;
type Hex = Viem.Hex;
/** EIP-3009 typed data, as USDC's `transferWithAuthorization` defines it. */
const TRANSFER_WITH_AUTHORIZATION = {
  TransferWithAuthorization: [
    { name: 'from', type: 'address' },
    { name: 'to', type: 'address' },
    { name: 'value', type: 'uint256' },
    { name: 'validAfter', type: 'uint256' },
    { name: 'validBefore', type: 'uint256' },
    { name: 'nonce', type: 'bytes32' },
  ],
} as const;

/** `eip155:<chainId>` → chainId. */
export function chainIdOf(network: string): number | undefined {
  const m = /^eip155:([1-9][0-9]{0,9})$/.exec(network);
  return m ? Number(m[1]) : undefined;
}

/**
 * FOR TESTS AND DEMOS ONLY: nothing is settled on any chain, so a signature over money the payer does not have
 * passes. The payment service uses it only when configured explicitly (`PAYMENT_X402_FACILITATOR=local`, which the
 * distributed app refuses unless `PAYMENT_X402_ALLOW_LOCAL_FACILITATOR=true`).
 *
 * A facilitator that checks everything a chain-backed one checks before
 * broadcasting — the EIP-712 signature recovers to `from`, the recipient, the
 * token, the amount, the validity window — and "settles" by recording the
 * authorization locally (the transaction id is the hash of the signature).
 * Single use of the nonce is enforced by the payment service's database when the
 * payment attempt is recorded, so it holds across instances.
 */
export class LocalFacilitator implements X402Facilitator {
  readonly name = 'local';
  /** Its pretend chain: `payer:nonce` → the transaction that used the authorization (read by LocalChainState). */
  readonly used = new Map<string, string>();
  constructor(readonly now: () => number = () => Date.now()) {}

  /** No `upto`: nothing here could ever collect a charge, so metered tools stay wallet-only with this facilitator. */
  async uptoAddress(): Promise<undefined> {
    return undefined;
  }

  async verify(payment: PaymentPayload, requirements: PaymentRequirements): Promise<VerifyOutcome> {
    const reason = await this.problem(payment, requirements);
    return reason ? { kind: 'invalid', reason } : { kind: 'valid', payer: getAddress(payment.payload.authorization.from) };
  }

  async settle(payment: PaymentPayload, requirements: PaymentRequirements): Promise<SettleOutcome> {
    const reason = await this.problem(payment, requirements);
    if (reason) return { kind: 'refused', reason };
    const payer = getAddress(payment.payload.authorization.from);
    const transaction = keccak256(payment.payload.signature as Hex);
    this.used.set(usedKey(payer, payment.payload.authorization.nonce), transaction);
    return { kind: 'settled', response: { success: true, payer, transaction, network: requirements.network } };
  }

  private async problem(payment: PaymentPayload, req: PaymentRequirements): Promise<InvalidReason | undefined> {
    const auth = payment?.payload?.authorization;
    const signature = payment?.payload?.signature;
    if (payment?.x402Version !== 2 || !auth || typeof signature !== 'string' || !isHex(signature)) return 'invalid_payload';
    if (![auth.from, auth.to].every((a) => typeof a === 'string' && isAddress(a)) || !isHex(auth.nonce) || auth.nonce.length !== 66) return 'invalid_payload';
    if (![auth.value, auth.validAfter, auth.validBefore].every((n) => typeof n === 'string' && /^(0|[1-9][0-9]{0,77})$/.test(n))) return 'invalid_payload';
    if (BigInt(auth.value) > MAX_AMOUNT_MINOR) return 'amount_mismatch';
    if (payment.accepted?.scheme !== 'exact') return 'unsupported_scheme';
    if (payment.accepted.network !== req.network) return 'invalid_network';
    const chainId = chainIdOf(req.network);
    if (chainId === undefined) return 'invalid_network';
    if (getAddress(auth.to) !== getAddress(req.payTo)) return 'recipient_mismatch';
    if (!isAddress(payment.accepted.asset) || getAddress(payment.accepted.asset) !== getAddress(req.asset)) return 'asset_mismatch';
    const ok = await verifyTypedData({
      address: getAddress(auth.from),
      domain: { name: req.extra.name, version: req.extra.version, chainId, verifyingContract: getAddress(req.asset) },
      types: TRANSFER_WITH_AUTHORIZATION,
      primaryType: 'TransferWithAuthorization',
      message: {
        from: getAddress(auth.from), to: getAddress(auth.to), value: BigInt(auth.value),
        validAfter: BigInt(auth.validAfter), validBefore: BigInt(auth.validBefore), nonce: auth.nonce as Hex,
      },
      signature: signature as Hex,
    }).catch(() => false);
    if (!ok) return 'invalid_signature';
    if (BigInt(auth.value) < BigInt(req.amount)) return 'insufficient_amount';
    // The exact scheme: the authorization moves the price, so a bigger signed value is not "change" to keep.
    if (BigInt(auth.value) !== BigInt(req.amount)) return 'amount_mismatch';
    const nowS = BigInt(Math.floor(this.now() / 1000));
    if (BigInt(auth.validAfter) > nowS) return 'authorization_not_yet_valid';
    // A few seconds of margin, as facilitators keep for the block that would carry the transfer.
    if (BigInt(auth.validBefore) < nowS + 6n) return 'authorization_expired';
    return undefined;
  }
}

function usedKey(payer: string, nonce: string): string {
  return `${payer.toLowerCase()}:${nonce.toLowerCase()}`;
}

/**
 * FOR TESTS AND DEMOS ONLY, with LocalFacilitator: its pretend chain, kept in the process's memory. An authorization
 * it "settled" reads as transferred to `payTo` (it checked the recipient and the value before), any other as unused.
 */
export class LocalChainState implements ChainState {
  readonly name = 'local';
  constructor(private readonly facilitator: LocalFacilitator) {}

  async authorization(q: AuthorizationQuery): Promise<ChainVerdict> {
    const transaction = this.facilitator.used.get(usedKey(q.payer, q.nonce));
    if (transaction) return { kind: 'transferred', transaction };
    return { kind: 'unused', chainTime: BigInt(Math.floor(this.facilitator.now() / 1000)) };
  }
}
