import { existsSync, readFileSync } from 'node:fs';
import { writeJsonDurably } from '../lib/durable-json';

/** One payment the sandbox method made, keyed by its reference (the MPP challenge id): a charge, or an authorization. */
export interface SandboxPayment {
  kind: 'charge' | 'authorize';
  token: string;
  amount: string;
  currency: string;
  /** An authorization's capture (at most its amount), once. */
  captured?: string;
  at: string;
}

export interface SandboxState {
  /** Payer token → balance (minor units). */
  balances: Record<string, string>;
  payments: Record<string, SandboxPayment>;
}

export type SandboxAnswer = { ok: true; payment: SandboxPayment } | { ok: false; status: number; error: string };

/**
 * The sandbox payment method's own record (a JSON file, written before anyone is told): payers' balances, and every
 * payment by its reference. Each operation is idempotent by reference — asked again, it answers what it did.
 */
export class SandboxBook {
  state: SandboxState;

  constructor(private readonly file: string) {
    this.state = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as SandboxState) : { balances: {}, payments: {} };
  }

  fund(token: string, amount: bigint): void {
    this.state.balances[token] = (this.balanceOf(token) + amount).toString();
    this.persist();
  }

  balanceOf(token: string): bigint {
    return BigInt(this.state.balances[token] ?? '0');
  }

  /** A charge (or an authorization: the amount reserved until captured) of `amount` from the payer's balance, once per reference. */
  pay(kind: SandboxPayment['kind'], reference: string, p: { token: string; amount: string; currency: string }): SandboxAnswer {
    const known = this.state.payments[reference];
    if (known) return known.kind === kind && known.token === p.token && known.amount === p.amount ? { ok: true, payment: known } : { ok: false, status: 409, error: 'reference_reused' };
    if (this.state.balances[p.token] === undefined) return { ok: false, status: 402, error: 'unknown_payer' };
    if (this.balanceOf(p.token) < BigInt(p.amount)) return { ok: false, status: 402, error: 'insufficient_funds' };
    this.state.balances[p.token] = (this.balanceOf(p.token) - BigInt(p.amount)).toString();
    const payment: SandboxPayment = { kind, token: p.token, amount: p.amount, currency: p.currency, at: new Date().toISOString() };
    this.state.payments[reference] = payment;
    this.persist();
    return { ok: true, payment };
  }

  /** Captures `amount` of an authorization (the rest goes back to the payer), once; asked again, the first capture stands. */
  capture(reference: string, amount: bigint): SandboxAnswer {
    const p = this.state.payments[reference];
    if (!p || p.kind !== 'authorize') return { ok: false, status: 404, error: 'no_such_authorization' };
    if (p.captured !== undefined) return { ok: true, payment: p };
    if (amount > BigInt(p.amount)) return { ok: false, status: 400, error: 'capture_exceeds_authorization' };
    p.captured = amount.toString();
    this.state.balances[p.token] = (this.balanceOf(p.token) + BigInt(p.amount) - amount).toString();
    this.persist();
    return { ok: true, payment: p };
  }

  private persist(): void {
    writeJsonDurably(this.file, this.state);
  }
}
