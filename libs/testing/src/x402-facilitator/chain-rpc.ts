import type * as Viem from 'viem' with { 'resolution-mode': 'import' };
import { PERMIT2_ADDRESS, x402UptoPermit2ProxyAddress } from '@x402/evm';
import { type ChainTransfer, type FacilitatorLedger } from './facilitator-ledger';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { decodeFunctionData, encodeAbiParameters, encodeEventTopics, encodeFunctionResult, getAddress, keccak256, parseAbi, toHex } = require('viem') as typeof Viem;

const PERMIT2_ABI = parseAbi(['function nonceBitmap(address owner, uint256 wordPos) view returns (uint256)']);

const TOKEN_ABI = parseAbi([
  'function authorizationState(address authorizer, bytes32 nonce) view returns (bool)',
  'event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)',
  'event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce)',
  'event Transfer(address indexed from, address indexed to, uint256 value)',
]);
type Log = { address: string; topics: string[]; data: string; blockNumber: string; blockHash: string; transactionHash: string; transactionIndex: string; logIndex: string; removed: false };

/**
 * The stand-in chain's Ethereum JSON-RPC: the few methods a payment service reads an EIP-3009 token with
 * (`eth_call` of `authorizationState`, `eth_getLogs`, `eth_getTransactionReceipt`, `eth_getBlockByNumber`,
 * `eth_blockNumber`, `eth_chainId`). Block n carries the n-th transfer or cancellation of the ledger; the token is
 * whichever contract is asked (the simulated chain has one token).
 */
export class ChainRpc {
  constructor(private readonly ledger: FacilitatorLedger, private readonly chainId: number) {}

  answer(method: string, params: unknown[]): unknown {
    const latest = this.ledger.state.transfers.length;
    switch (method) {
      case 'eth_chainId': return toHex(this.chainId);
      case 'eth_blockNumber': return toHex(latest);
      case 'eth_getBlockByNumber': return this.block(latest);
      case 'eth_call': return this.call(params[0] as { to?: string; data: Viem.Hex });
      case 'eth_getTransactionByHash': return this.transaction(String(params[0]));
      case 'eth_getLogs': return this.logs(params[0] as { address?: string; topics?: (string | null)[] });
      case 'eth_getTransactionReceipt': return this.receipt(String(params[0]));
      default: throw Object.assign(new Error(`method ${method} not supported by the stand-in chain`), { code: -32601 });
    }
  }

  private block(n: number) {
    const t = this.ledger.state.transfers[n - 1];
    const timestamp = Math.floor(Date.now() / 1000);
    return {
      number: toHex(n), hash: blockHash(n), parentHash: blockHash(n - 1), timestamp: toHex(t ? Math.min(timestamp, Math.floor(Date.parse(t.at) / 1000)) : timestamp),
      nonce: '0x0000000000000000', difficulty: '0x0', gasLimit: '0x1c9c380', gasUsed: '0x0', miner: `0x${'0'.repeat(40)}`, extraData: '0x',
      logsBloom: `0x${'0'.repeat(512)}`, transactionsRoot: blockHash(n), stateRoot: blockHash(n), receiptsRoot: blockHash(n), sha3Uncles: blockHash(n),
      size: '0x0', baseFeePerGas: '0x1', totalDifficulty: '0x0', transactions: [], uncles: [],
    };
  }

  private call(tx: { to?: string; data: Viem.Hex }): Viem.Hex {
    if (tx.to && getAddress(tx.to) === getAddress(PERMIT2_ADDRESS)) return this.nonceBitmap(tx.data);
    const { args } = decodeFunctionData({ abi: TOKEN_ABI, data: tx.data });
    const [authorizer, nonce] = args as readonly [string, string];
    const used = this.ledger.state.usedNonces[`${authorizer.toLowerCase()}:${nonce.toLowerCase()}`] !== undefined;
    return encodeFunctionResult({ abi: TOKEN_ABI, functionName: 'authorizationState', result: used });
  }

  /** Permit2's `nonceBitmap(owner, wordPos)`: bit n of word w set when the owner's nonce w·256 + n was used. */
  private nonceBitmap(data: Viem.Hex): Viem.Hex {
    const [owner, wordPos] = decodeFunctionData({ abi: PERMIT2_ABI, data }).args;
    let word = 0n;
    for (const key of Object.keys(this.ledger.state.usedNonces)) {
      const m = /^(0x[0-9a-f]{40}):permit2:([0-9]+)$/.exec(key);
      if (m && m[1] === owner.toLowerCase() && BigInt(m[2]!) >> 8n === wordPos) word |= 1n << (BigInt(m[2]!) & 255n);
    }
    return encodeFunctionResult({ abi: PERMIT2_ABI, functionName: 'nonceBitmap', result: word });
  }

  /** A transaction: an upto settle is a call of the x402 upto proxy with its input; the rest, calls of the token. */
  private transaction(hash: string) {
    const i = this.ledger.state.transfers.findIndex((t) => t.transaction.toLowerCase() === hash.toLowerCase());
    if (i < 0) return null;
    const t = this.ledger.state.transfers[i]!;
    return {
      hash: t.transaction, blockNumber: toHex(i + 1), blockHash: blockHash(i + 1), transactionIndex: '0x0', type: '0x2', chainId: toHex(this.chainId),
      from: getAddress(t.from), to: t.kind === 'permit2' ? x402UptoPermit2ProxyAddress : getAddress(t.asset ?? t.to), input: t.input ?? '0x', value: '0x0',
      nonce: '0x0', gas: '0x30d40', maxFeePerGas: '0x1', maxPriorityFeePerGas: '0x1', gasPrice: '0x1', accessList: [], v: '0x0', r: '0x1', s: '0x1', yParity: '0x0',
    };
  }

  private logs(filter: { address?: string; topics?: (string | null)[] }): Log[] {
    const all = this.ledger.state.transfers.flatMap((t, i) => logsOf(t, i + 1, filter.address ?? t.asset ?? ''));
    return all.filter((l) => (filter.topics ?? []).every((topic, i) => topic === null || topic === undefined || l.topics[i]?.toLowerCase() === topic.toLowerCase()));
  }

  private receipt(hash: string) {
    const i = this.ledger.state.transfers.findIndex((t) => t.transaction.toLowerCase() === hash.toLowerCase());
    if (i < 0) return null;
    const t = this.ledger.state.transfers[i]!;
    return {
      transactionHash: t.transaction, blockNumber: toHex(i + 1), blockHash: blockHash(i + 1), transactionIndex: '0x0', status: '0x1', type: '0x2',
      from: getAddress(t.from), to: t.kind === 'permit2' ? x402UptoPermit2ProxyAddress : t.asset ? getAddress(t.asset) : null, contractAddress: null, gasUsed: '0x1', cumulativeGasUsed: '0x1',
      effectiveGasPrice: '0x1', logsBloom: `0x${'0'.repeat(512)}`, logs: logsOf(t, i + 1, t.asset ?? ''),
    };
  }
}

/** A transfer's logs: `Transfer` then `AuthorizationUsed`, as FiatToken emits them; a cancellation's `AuthorizationCanceled`. */
function logsOf(t: ChainTransfer, block: number, token: string): Log[] {
  const base = { address: token, blockNumber: toHex(block), blockHash: blockHash(block), transactionHash: t.transaction, transactionIndex: '0x0', removed: false as const };
  const nonce = t.nonce as Viem.Hex;
  const authorizer = getAddress(t.from);
  if (t.kind === 'cancel') {
    return [{ ...base, logIndex: '0x0', data: '0x', topics: topicsOf({ abi: TOKEN_ABI, eventName: 'AuthorizationCanceled', args: { authorizer, nonce } }) }];
  }
  const transfer = { ...base, logIndex: '0x0', data: encodeAbiParameters([{ type: 'uint256' }], [BigInt(t.value)]), topics: topicsOf({ abi: TOKEN_ABI, eventName: 'Transfer', args: { from: authorizer, to: getAddress(t.to) } }) };
  // Permit2 moves the token with transferFrom: a Transfer, no EIP-3009 event (its nonce is in the call's input).
  if (t.kind === 'permit2') return [transfer];
  return [transfer, { ...base, logIndex: '0x1', data: '0x', topics: topicsOf({ abi: TOKEN_ABI, eventName: 'AuthorizationUsed', args: { authorizer, nonce } }) }];
}

/** An event's topics, all given (no wildcard): what a log carries. */
function topicsOf(...args: Parameters<typeof encodeEventTopics>): string[] {
  return encodeEventTopics(...args).map((t) => String(t));
}

function blockHash(n: number): string {
  return keccak256(toHex(`stand-in block ${n}`));
}
