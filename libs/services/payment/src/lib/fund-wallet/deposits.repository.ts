import { type EntityManager } from 'typeorm';

/** `payment.deposit`: one row per credit to a wallet, unique by its external reference (a bank transfer, an x402 payment). */
export interface DepositRow {
  deposit_id: string; reference: string; owner_id: string; source: 'admin' | 'x402'; amount_minor: string; asset: string;
  created_at: Date; charged_back_at: Date | null;
}

type Executor = Pick<EntityManager, 'query'>;

/** Every statement on `payment.deposit`, and the wallet read of the admin API. */
export const Deposits = {
  /**
   * Records a deposit unless its reference is known; the id of the one recorded under it, and whether it is new. Two
   * statements on purpose: after a concurrent insert of the same reference commits, only a new statement sees it.
   */
  async record(m: Executor, d: Pick<DepositRow, 'deposit_id' | 'reference' | 'owner_id' | 'source' | 'amount_minor' | 'asset'>): Promise<{ depositId: string; fresh: boolean }> {
    const inserted = (await m.query(
      `INSERT INTO payment.deposit (deposit_id, reference, owner_id, source, amount_minor, asset) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (reference) DO NOTHING RETURNING deposit_id`,
      [d.deposit_id, d.reference, d.owner_id, d.source, d.amount_minor, d.asset])) as Pick<DepositRow, 'deposit_id'>[];
    if (inserted.length > 0) return { depositId: inserted[0]!.deposit_id, fresh: true };
    const [prior] = (await m.query('SELECT deposit_id FROM payment.deposit WHERE reference = $1', [d.reference])) as Pick<DepositRow, 'deposit_id'>[];
    return { depositId: prior!.deposit_id, fresh: false };
  },

  /** The deposit under this reference, locked for a chargeback. */
  async lockByReference(m: Executor, reference: string): Promise<Pick<DepositRow, 'owner_id' | 'amount_minor' | 'asset' | 'charged_back_at'> | undefined> {
    const rows = (await m.query('SELECT owner_id, amount_minor, asset, charged_back_at FROM payment.deposit WHERE reference = $1 FOR UPDATE', [reference])) as
      Pick<DepositRow, 'owner_id' | 'amount_minor' | 'asset' | 'charged_back_at'>[];
    return rows[0];
  },

  async markChargedBack(m: Executor, reference: string): Promise<void> {
    await m.query('UPDATE payment.deposit SET charged_back_at = now() WHERE reference = $1', [reference]);
  },

  /** The balances of these accounts (`payment.balance`), by asset. */
  async balances(db: Executor, accounts: readonly string[]): Promise<{ account: string; asset: string; balance: string }[]> {
    return (await db.query('SELECT account, asset, balance FROM payment.balance WHERE account = ANY($1) ORDER BY asset', [accounts])) as { account: string; asset: string; balance: string }[];
  },
};
