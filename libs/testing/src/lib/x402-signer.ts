import { randomBytes } from 'node:crypto';
import type * as Viem from 'viem' with { 'resolution-mode': 'import' };
import type * as ViemAccounts from 'viem/accounts' with { 'resolution-mode': 'import' };

// viem ships CommonJS beside ESM, but marks its type declarations as ESM: node16 resolution needs the types and the value apart.
/* eslint-disable @typescript-eslint/no-require-imports */
const { getAddress } = require('viem') as typeof Viem;
const { generatePrivateKey, privateKeyToAccount } = require('viem/accounts') as typeof ViemAccounts;
/* eslint-enable @typescript-eslint/no-require-imports */
import { UptoEvmScheme } from '@x402/evm/upto/client';

/** The x402 v2 `exact` requirement as the gateway returns it in `_meta["x402/paymentRequired"].accepts[]`. */
export interface ExactRequirement {
  scheme: string;
  network: string;
  amount: string;
  asset: string;
  payTo: string;
  maxTimeoutSeconds: number;
  extra: { name: string; version: string };
}

/**
 * An agent's wallet for tests: a freshly generated key that signs x402
 * payments (EIP-3009 transferWithAuthorization as EIP-712 typed data), the
 * way an x402 client does. Overrides make the bad payments tests need.
 */
export function testPayer() {
  const account = privateKeyToAccount(generatePrivateKey());
  return {
    address: account.address,
    /** An `upto` payment for a metered call's requirement, made by `@x402/evm`'s own upto client (a Permit2 witness transfer). */
    async signUpto(req: ExactRequirement & { extra: { facilitatorAddress?: string } }) {
      const created = await new UptoEvmScheme(account).createPaymentPayload(2, req as never);
      return { x402Version: 2, accepted: req, payload: created.payload } as { x402Version: 2; accepted: typeof req; payload: { signature: string; permit2Authorization: { nonce: string; permitted: { amount: string } } } };
    },
    async sign(req: ExactRequirement, o: { value?: bigint; validAfter?: bigint; validBefore?: bigint; nonce?: `0x${string}`; network?: string } = {}) {
      const now = BigInt(Math.floor(Date.now() / 1000));
      const network = o.network ?? req.network;
      const authorization = {
        from: account.address,
        to: getAddress(req.payTo),
        value: o.value ?? BigInt(req.amount),
        validAfter: o.validAfter ?? now - 60n,
        validBefore: o.validBefore ?? now + BigInt(req.maxTimeoutSeconds),
        nonce: o.nonce ?? (`0x${randomBytes(32).toString('hex')}` as const),
      };
      const signature = await account.signTypedData({
        domain: { name: req.extra.name, version: req.extra.version, chainId: Number(network.split(':')[1]), verifyingContract: getAddress(req.asset) },
        types: {
          TransferWithAuthorization: [
            { name: 'from', type: 'address' }, { name: 'to', type: 'address' }, { name: 'value', type: 'uint256' },
            { name: 'validAfter', type: 'uint256' }, { name: 'validBefore', type: 'uint256' }, { name: 'nonce', type: 'bytes32' },
          ],
        },
        primaryType: 'TransferWithAuthorization',
        message: authorization,
      });
      return {
        x402Version: 2,
        accepted: { ...req, network },
        payload: {
          signature,
          authorization: {
            from: authorization.from, to: authorization.to, value: authorization.value.toString(),
            validAfter: authorization.validAfter.toString(), validBefore: authorization.validBefore.toString(), nonce: authorization.nonce,
          },
        },
      };
    },
  };
}
