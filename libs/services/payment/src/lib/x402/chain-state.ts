/**
 * What the chain says about one x402 `exact` (EIP-3009) authorization: the payment's own truth. A facilitator's answer
 * is a claim; before money is credited or a payment refused after a settle, the chain is asked.
 */
export interface AuthorizationQuery {
  /** CAIP-2 network, e.g. `eip155:84532`. */
  network: string;
  /** The token contract (EIP-3009 `authorizationState`, `AuthorizationUsed`, `Transfer`). */
  asset: string;
  payer: string;
  /** The authorization's nonce: `exact`'s bytes32 (0x-hex), or `permit2:<uint256>` for an `upto` Permit2 authorization. */
  nonce: string;
  payTo: string;
  /** Atomic units the authorization moves (`upto`: the charge collected, at most the authorization's maximum). */
  value: bigint;
}

/** An `upto` attempt's Permit2 nonce (recorded as `permit2:<uint256>`); undefined for an `exact` one. */
export function permit2NonceOf(nonce: string): bigint | undefined {
  const m = /^permit2:(0|[1-9][0-9]{0,77})$/.exec(nonce);
  return m ? BigInt(m[1]!) : undefined;
}

export type ChainVerdict =
  /** The nonce was used by a transfer of `value` from the payer to `payTo`: the money moved, in `transaction`. */
  | { kind: 'transferred'; transaction: string }
  /** The nonce is used, but no such transfer carries it (the payer cancelled the authorization): nothing moved to us. */
  | { kind: 'used-otherwise' }
  /** The nonce is unused as of the chain's latest block, whose time (unix seconds) is `chainTime`. */
  | { kind: 'unused'; chainTime: bigint }
  /** The chain could not be read (RPC down, timeout, an answer that is not one): no verdict. */
  | { kind: 'unreadable'; problem: string };

/** Reads an authorization's state on a chain: the RPC one in production, the local facilitator's in tests and demos. */
export interface ChainState {
  readonly name: string;
  authorization(q: AuthorizationQuery): Promise<ChainVerdict>;
}

export const X402_CHAIN = Symbol('X402_CHAIN');
