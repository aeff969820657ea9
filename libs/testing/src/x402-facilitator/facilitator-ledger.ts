import { existsSync, readFileSync } from 'node:fs';
import { writeJsonDurably } from '../lib/durable-json';

/** One transfer the simulated chain carried out: EIP-3009 `transferWithAuthorization`. */
export interface ChainTransfer {
  transaction: string;
  from: string;
  to: string;
  value: string;
  nonce: string;
  paymentId: string | null;
  at: string;
  /** The token contract (the simulated chain has one; older state files lack it). */
  asset?: string;
  /**
   * A cancellation (`cancelAuthorization`) spends the nonce and moves nothing; `permit2`: an upto settle through the
   * x402 upto proxy (its nonce `permit2:<uint256>`, its call data in `input`); absent: an EIP-3009 transfer.
   */
  kind?: 'transfer' | 'cancel' | 'permit2';
  input?: string;
}

/** What the simulated chain and facilitator remember across restarts (a JSON file, written atomically, fsynced). */
export interface FacilitatorState {
  balances: Record<string, string>;
  /** `from:nonce` → transaction: an authorization is used once, on chain. */
  usedNonces: Record<string, string>;
  /** payment-identifier → the settle response given (x402's payment-identifier extension: same id, same answer). */
  settlements: Record<string, Record<string, unknown>>;
  transfers: ChainTransfer[];
}

export class FacilitatorLedger {
  state: FacilitatorState;

  constructor(private readonly file: string) {
    this.state = existsSync(file)
      ? (JSON.parse(readFileSync(file, 'utf8')) as FacilitatorState)
      : { balances: {}, usedNonces: {}, settlements: {}, transfers: [] };
  }

  balanceOf(address: string): bigint {
    return BigInt(this.state.balances[address.toLowerCase()] ?? '0');
  }

  fund(address: string, amount: bigint): void {
    this.state.balances[address.toLowerCase()] = (this.balanceOf(address) + amount).toString();
    this.persist();
  }

  /** Moves the money and records the nonce and the settlement together, durably, before anyone is told. */
  transfer(t: ChainTransfer, response: Record<string, unknown>): void {
    const value = BigInt(t.value);
    this.state.balances[t.from.toLowerCase()] = (this.balanceOf(t.from) - value).toString();
    this.state.balances[t.to.toLowerCase()] = (this.balanceOf(t.to) + value).toString();
    this.state.usedNonces[`${t.from.toLowerCase()}:${t.nonce.toLowerCase()}`] = t.transaction;
    if (t.paymentId) this.state.settlements[t.paymentId] = response;
    this.state.transfers.push(t);
    this.persist();
  }

  /** The answer given to a settle of this payment identifier (a facilitator that deduplicates gives it again). */
  remember(paymentId: string, response: Record<string, unknown>): void {
    this.state.settlements[paymentId] = response;
    this.persist();
  }

  /** The payer cancels an authorization (EIP-3009 `cancelAuthorization`): its nonce is spent, nothing moves. */
  cancel(from: string, nonce: string, asset: string): void {
    const transaction = `0x${Buffer.from(`${from}:${nonce}:cancel`).toString('hex').padEnd(64, '0').slice(0, 64)}`;
    this.state.usedNonces[`${from.toLowerCase()}:${nonce.toLowerCase()}`] = transaction;
    this.state.transfers.push({ transaction, from, to: from, value: '0', nonce, paymentId: null, at: new Date().toISOString(), asset, kind: 'cancel' });
    this.persist();
  }

  private persist(): void {
    writeJsonDurably(this.file, this.state);
  }
}
