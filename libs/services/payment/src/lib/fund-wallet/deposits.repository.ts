import { type EntityManager } from 'typeorm';
import { col, defineTable, LEDGER_BALANCE, type RowOf, select } from '@tollgate/persistence';

/** `payment.deposit`: one row per credit to a wallet, unique by its external reference (a bank transfer, an x402 payment). */
export const DEPOSIT = defineTable('payment.deposit', {
  deposit_id: col.uuid().required(),
  reference: col.text().required(),
  owner_id: col.text().required(),
  source: col.text<'admin' | 'x402' | 'x402-upto' | 'mpp' | 'mpp-authorize'>().required(),
  amount_minor: col.bigint().required(),
  asset: col.text().required(),
  charged_back_at: col.timestamptz().nullable(),
  created_at: col.timestamptz().required(),
});
export type DepositRow = RowOf<typeof DEPOSIT>;

type Executor = Pick<EntityManager, 'query'>;

/** A deposit as recorded. */
export type NewDeposit = Pick<DepositRow, 'deposit_id' | 'reference' | 'owner_id' | 'source' | 'amount_minor' | 'asset'>;

/** Every statement on `payment.deposit`, and the wallet read of the admin API. */
export const Deposits = {
  /**
   * Records a deposit unless its reference is known; the id of the one recorded under it, and whether it is new. Two
   * statements on purpose: after a concurrent insert of the same reference commits, only a new statement sees it.
   */
  async record(m: Executor, d: NewDeposit): Promise<{ depositId: string; fresh: boolean }> {
    const inserted = await select(m, DEPOSIT, ['deposit_id'],
      `INSERT INTO payment.deposit (deposit_id, reference, owner_id, source, amount_minor, asset) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (reference) DO NOTHING RETURNING deposit_id`,
      [d.deposit_id, d.reference, d.owner_id, d.source, d.amount_minor, d.asset]);
    if (inserted.length > 0) return { depositId: inserted[0]!.deposit_id, fresh: true };
    const [prior] = await select(m, DEPOSIT, ['deposit_id'], 'SELECT deposit_id FROM payment.deposit WHERE reference = $1', [d.reference]);
    return { depositId: prior!.deposit_id, fresh: false };
  },

  /** The deposit under this reference, locked for a chargeback. */
  async lockByReference(m: Executor, reference: string): Promise<Pick<DepositRow, 'owner_id' | 'amount_minor' | 'asset' | 'charged_back_at'> | undefined> {
    const [row] = await select(m, DEPOSIT, ['owner_id', 'amount_minor', 'asset', 'charged_back_at'],
      'SELECT owner_id, amount_minor, asset, charged_back_at FROM payment.deposit WHERE reference = $1 FOR UPDATE', [reference]);
    return row;
  },

  async markChargedBack(m: Executor, reference: string): Promise<void> {
    await m.query('UPDATE payment.deposit SET charged_back_at = now() WHERE reference = $1', [reference]);
  },

  /** The balances of these accounts (`payment.balance`), by asset. */
  async balances(db: Executor, accounts: readonly string[]): Promise<{ account: string; asset: string; balance: string }[]> {
    return select(db, LEDGER_BALANCE, ['account', 'asset', 'balance'], 'SELECT account, asset, balance FROM payment.balance WHERE account = ANY($1) ORDER BY asset', [accounts]);
  },
};
