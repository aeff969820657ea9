import type * as Viem from 'viem' with { 'resolution-mode': 'import' };
import { type AuthorizationQuery, type ChainState, type ChainVerdict } from './chain-state';

// viem ships CommonJS beside ESM but marks its declarations as ESM: node16 resolution needs the types and the value apart.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { createPublicClient, getAddress, http, parseAbi, parseEventLogs } = require('viem') as typeof Viem;

/** The EIP-3009 token surface the verdict needs (USDC's `FiatTokenV2`). */
const TOKEN_ABI = parseAbi([
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);

export interface RpcChainOptions {
  url: string;
  timeoutMs: number;
  /** How far back (blocks) to look for the transfer that used a nonce; an authorization lives minutes, not days. */
  lookbackBlocks: bigint;
}

/**
 * The chain itself, read over JSON-RPC with viem (typed ABI encoding, log decoding, receipts, timeouts — the library
 * x402's own EVM packages build on). A used nonce is matched to its `AuthorizationUsed` log, and that transaction's
 * receipt must carry the `Transfer` of the value from the payer to `payTo`; only then did the money move to us.
 */
export class RpcChainState implements ChainState {
  readonly name: string;
  private readonly client: Viem.PublicClient;

  constructor(private readonly options: RpcChainOptions) {
    this.name = new URL(options.url).origin;
    this.client = createPublicClient({ transport: http(options.url, { timeout: options.timeoutMs, retryCount: 1 }) });
  }

  async authorization(q: AuthorizationQuery): Promise<ChainVerdict> {
    try {
      const token = getAddress(q.asset);
      const block = await this.client.getBlock({ blockTag: 'latest' });
      const used = await this.client.readContract({
        address: token, abi: TOKEN_ABI, functionName: 'authorizationState', args: [getAddress(q.payer), q.nonce as Viem.Hex], blockNumber: block.number,
      });
      if (!used) return { kind: 'unused', chainTime: block.timestamp };
      return await this.usedBy(token, q, block.number);
    } catch (error) {
      return { kind: 'unreadable', problem: problemOf(error) };
    }
  }

  /** The nonce is used: by the transfer to us, or by something else (a cancelled authorization). */
  private async usedBy(token: Viem.Address, q: AuthorizationQuery, latest: bigint): Promise<ChainVerdict> {
    const fromBlock = latest > this.options.lookbackBlocks ? latest - this.options.lookbackBlocks : 0n;
    const logs = await this.client.getLogs({
      address: token, event: TOKEN_ABI[1], args: { authorizer: getAddress(q.payer), nonce: q.nonce as Viem.Hex }, fromBlock, toBlock: latest,
    });
    for (const log of logs) {
      const receipt = await this.client.getTransactionReceipt({ hash: log.transactionHash! });
      if (receipt.status !== 'success') continue;
      const transfers = parseEventLogs({ abi: TOKEN_ABI, eventName: 'Transfer', logs: receipt.logs.filter((l) => getAddress(l.address) === token) });
      const paid = transfers.some((t) => getAddress(t.args.from) === getAddress(q.payer) && getAddress(t.args.to) === getAddress(q.payTo) && t.args.value === q.value);
      if (paid) return { kind: 'transferred', transaction: receipt.transactionHash };
    }
    if (logs.length > 0) return { kind: 'used-otherwise' };
    const cancelled = await this.client.getLogs({
      address: token, event: TOKEN_ABI[2], args: { authorizer: getAddress(q.payer), nonce: q.nonce as Viem.Hex }, fromBlock, toBlock: latest,
    });
    if (cancelled.length > 0) return { kind: 'used-otherwise' };
    // Used, and nothing within the look-back says how: no verdict (shown to ops), never a guess either way.
    return { kind: 'unreadable', problem: `chain: nonce used but neither its use nor its cancellation is within ${this.options.lookbackBlocks} blocks` };
  }
}

/** A short reason for the attempt's record and the logs (viem's short message, never a payload). */
function problemOf(error: unknown): string {
  const e = error as { shortMessage?: unknown; message?: unknown } | null;
  const text = typeof e?.shortMessage === 'string' ? e.shortMessage : typeof e?.message === 'string' ? e.message : String(error);
  return `chain: ${text}`.slice(0, 500);
}
