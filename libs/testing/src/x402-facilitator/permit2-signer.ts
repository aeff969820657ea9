import { randomBytes } from 'node:crypto';
import type * as Viem from 'viem' with { 'resolution-mode': 'import' };
import { x402UptoPermit2ProxyABI } from '@x402/evm';
import { type FacilitatorLedger } from './facilitator-ledger';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { encodeFunctionData, getAddress, verifyTypedData } = require('viem') as typeof Viem;

type Hex = `0x${string}`;
/** The x402 upto proxy's `settle(permit, amount, owner, witness, signature)`, as `@x402/evm`'s facilitator calls it. */
type SettleArgs = readonly [{ permitted: { token: string; amount: bigint }; nonce: bigint; deadline: bigint }, bigint, string, { to: string; facilitator: string; validAfter: bigint }, Hex];

/**
 * The stand-in chain as `@x402/evm`'s upto facilitator sees it (its `FacilitatorEvmSigner`): the x402 upto Permit2
 * proxy's `settle`, simulated (`readContract`) and sent (`writeContract`) against the facilitator's ledger, where the
 * payer's balance and Permit2's nonces live. A settle moves `amount` (≤ the permit's maximum) from the owner to the
 * witness's `to` and spends the nonce, written before anyone is told; the facilitator's own address is the one payers
 * sign into their permits. `onSent` runs right after a transfer is recorded (the fault "die after the transfer").
 */
export class StandInPermit2Signer {
  onSent: () => void = () => undefined;

  constructor(private readonly ledger: FacilitatorLedger, private readonly address: Hex) {}

  getAddresses(): readonly Hex[] {
    return [this.address];
  }

  async readContract(args: { functionName: string; args?: readonly unknown[] }): Promise<unknown> {
    if (args.functionName === 'settle') return void this.check(args.args as SettleArgs);
    throw new Error(`${args.functionName} is not simulated by the stand-in chain`);
  }

  verifyTypedData(args: Parameters<typeof verifyTypedData>[0]): Promise<boolean> {
    return verifyTypedData(args).catch(() => false);
  }

  async writeContract(args: { functionName: string; args: readonly unknown[] }): Promise<Hex> {
    if (args.functionName !== 'settle') throw new Error(`${args.functionName} is not supported by the stand-in chain`);
    const a = args.args as SettleArgs;
    this.check(a);
    const [permit, amount, owner, witness] = a;
    const transaction = `0x${randomBytes(32).toString('hex')}` as Hex;
    this.ledger.transfer({
      transaction, from: getAddress(owner), to: getAddress(witness.to), value: amount.toString(), nonce: `permit2:${permit.nonce}`, paymentId: null,
      at: new Date().toISOString(), asset: getAddress(permit.permitted.token), kind: 'permit2',
      input: encodeFunctionData({ abi: x402UptoPermit2ProxyABI, functionName: 'settle', args: a as never }),
    }, {});
    this.onSent();
    return transaction;
  }

  async sendTransaction(): Promise<Hex> {
    throw new Error('raw transactions are not supported by the stand-in chain');
  }

  async waitForTransactionReceipt(args: { hash: Hex }): Promise<{ status: string }> {
    const sent = this.ledger.state.transfers.some((t) => t.transaction.toLowerCase() === args.hash.toLowerCase());
    return { status: sent ? 'success' : 'reverted' };
  }

  /** Accounts the ledger holds a balance for are people (no code: their signatures are plain ECDSA); anything else, a contract. */
  async getCode(args: { address: string }): Promise<Hex> {
    return this.ledger.state.balances[args.address.toLowerCase()] !== undefined ? '0x' : '0x6080';
  }

  /** What the proxy would revert with: a used nonce, a permit past its deadline, more than permitted, an unfunded owner. */
  private check([permit, amount, owner]: SettleArgs): void {
    const reason = this.ledger.state.usedNonces[`${owner.toLowerCase()}:permit2:${permit.nonce}`] ? 'InvalidNonce'
      : permit.deadline < BigInt(Math.floor(Date.now() / 1000)) ? 'SignatureExpired'
        : amount > permit.permitted.amount ? 'AmountExceedsPermitted'
          : this.ledger.balanceOf(owner) < amount ? 'TRANSFER_FROM_FAILED' : undefined;
    if (reason) throw new Error(`execution reverted: ${reason}`);
  }
}
