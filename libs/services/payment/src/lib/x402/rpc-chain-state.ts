import type * as Viem from 'viem' with { 'resolution-mode': 'import' };
import { PERMIT2_ADDRESS, x402UptoPermit2ProxyABI, x402UptoPermit2ProxyAddress } from '@x402/evm';
import { type AuthorizationQuery, type ChainState, type ChainVerdict, permit2NonceOf } from './chain-state';

// viem ships CommonJS beside ESM but marks its declarations as ESM: node16 resolution needs the types and the value apart.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { createPublicClient, decodeFunctionData, getAddress, http, parseAbi, parseEventLogs } = require('viem') as typeof Viem;

/** Permit2's unordered nonces: one bit per nonce in a 256-bit word; invalidation by the owner emits an event. */
const PERMIT2_ABI = parseAbi([
  'function nonceBitmap(address owner, uint256 wordPos) view returns (uint256)',
  'event UnorderedNonceInvalidation(address indexed owner, uint256 word, uint256 mask)',
]);

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
    const permit2Nonce = permit2NonceOf(q.nonce);
    if (permit2Nonce !== undefined) return this.permit2(q, permit2Nonce).catch((error: unknown) => ({ kind: 'unreadable' as const, problem: problemOf(error) }));
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

  /**
   * An `upto` (Permit2) authorization: its nonce's bit in Permit2's bitmap says whether it is used; a used one is
   * matched to the x402 upto proxy's `settle` that carries it (the transaction's input names the permit's nonce and
   * owner), whose receipt must show the `Transfer` of the charge from the payer to `payTo`.
   */
  private async permit2(q: AuthorizationQuery, nonce: bigint): Promise<ChainVerdict> {
    const payer = getAddress(q.payer);
    const block = await this.client.getBlock({ blockTag: 'latest' });
    const word = await this.client.readContract({ address: PERMIT2_ADDRESS, abi: PERMIT2_ABI, functionName: 'nonceBitmap', args: [payer, nonce >> 8n], blockNumber: block.number });
    if (((word >> (nonce & 255n)) & 1n) === 0n) return { kind: 'unused', chainTime: block.timestamp };
    const token = getAddress(q.asset);
    const fromBlock = block.number > this.options.lookbackBlocks ? block.number - this.options.lookbackBlocks : 0n;
    const logs = await this.client.getLogs({ address: token, event: TOKEN_ABI[3], args: { from: payer, to: getAddress(q.payTo) }, fromBlock, toBlock: block.number });
    for (const hash of new Set(logs.map((l) => l.transactionHash!))) {
      const settled = await this.settledBy(hash, q, nonce);
      if (settled) return settled;
    }
    const invalidated = await this.client.getLogs({ address: PERMIT2_ADDRESS, event: PERMIT2_ABI[1], args: { owner: payer }, fromBlock, toBlock: block.number });
    if (invalidated.some((l) => l.args.word === nonce >> 8n && ((l.args.mask! >> (nonce & 255n)) & 1n) === 1n)) return { kind: 'used-otherwise' };
    return { kind: 'unreadable', problem: `chain: Permit2 nonce used but no settle of it within ${this.options.lookbackBlocks} blocks` };
  }

  /** The verdict one transaction gives, if it is the upto proxy's settle of this permit (undefined: another transaction). */
  private async settledBy(hash: Viem.Hash, q: AuthorizationQuery, nonce: bigint): Promise<ChainVerdict | undefined> {
    const tx = await this.client.getTransaction({ hash });
    if (!tx.to || getAddress(tx.to) !== getAddress(x402UptoPermit2ProxyAddress)) return undefined;
    let call: { functionName: string; args?: readonly unknown[] };
    try {
      call = decodeFunctionData({ abi: x402UptoPermit2ProxyABI, data: tx.input });
    } catch {
      return undefined;
    }
    const args = (call.functionName === 'settleWithPermit' ? call.args?.slice(1) : call.args) as readonly [{ nonce: bigint }, bigint, string] | undefined;
    if (!args || (call.functionName !== 'settle' && call.functionName !== 'settleWithPermit')) return undefined;
    if (args[0].nonce !== nonce || getAddress(args[2]) !== getAddress(q.payer)) return undefined;
    const receipt = await this.client.getTransactionReceipt({ hash });
    if (receipt.status !== 'success') return undefined;
    const transfers = parseEventLogs({ abi: TOKEN_ABI, eventName: 'Transfer', logs: receipt.logs.filter((l) => getAddress(l.address) === getAddress(q.asset)) });
    const paid = transfers.find((t) => getAddress(t.args.from) === getAddress(q.payer) && getAddress(t.args.to) === getAddress(q.payTo));
    if (paid?.args.value === q.value) return { kind: 'transferred', transaction: hash };
    // Our permit settled for another amount than this charge: money moved, but not what the books say. Ops decide.
    return { kind: 'unreadable', problem: `chain: the permit settled ${paid?.args.value ?? 0n} in ${hash}, not the charge ${q.value}` };
  }
}

/** A short reason for the attempt's record and the logs (viem's short message, never a payload). */
function problemOf(error: unknown): string {
  const e = error as { shortMessage?: unknown; message?: unknown } | null;
  const text = typeof e?.shortMessage === 'string' ? e.shortMessage : typeof e?.message === 'string' ? e.message : String(error);
  return `chain: ${text}`.slice(0, 500);
}
