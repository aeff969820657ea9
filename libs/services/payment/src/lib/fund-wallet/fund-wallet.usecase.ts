import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import { accountKey, Movements, repaidOf } from '@tollgate/accounting';
import { money, WalletChargedBack, WalletFunded } from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { applyPosting, balanceOf } from '@tollgate/persistence';
import { PAYMENT, PAYMENT_OUTBOX } from '../payment.constants';
import { Deposits } from './deposits.repository';

export interface WalletView {
  ownerId: string;
  balances: { asset: string; available: string; held: string; debt: string }[];
}

/** Wallets: deposits credited once per external reference, chargebacks, and what an owner holds. */
@Injectable()
export class FundWalletUseCase {
  constructor(
    @InjectDataSource(PAYMENT) private readonly dataSource: DataSource,
    @Inject(PAYMENT_OUTBOX) private readonly outbox: OutboxWriter,
  ) {}

  /** The same reference twice credits once: the second answer names the first deposit and `credited: false`. */
  async deposit(ownerId: string, reference: string, amountMinor: bigint, asset: string): Promise<{ depositId: string; credited: boolean }> {
    return this.dataSource.transaction((m) => this.credit(m, { ownerId, reference, source: 'admin', amountMinor, asset }));
  }

  /**
   * Credits a wallet in the caller's transaction, once per external reference (an admin deposit, a settled x402
   * transfer): the deposit row, the posting (repaying debt first), WalletFunded.
   */
  async credit(m: EntityManager, c: { ownerId: string; reference: string; source: 'admin' | 'x402' | 'x402-upto' | 'mpp' | 'mpp-authorize'; amountMinor: bigint; asset: string; intentId?: string; repayDebt?: boolean }, causationId?: string): Promise<{ depositId: string; credited: boolean }> {
    const depositId = randomUUID();
    const recorded = await Deposits.record(m, { deposit_id: depositId, reference: c.reference, owner_id: c.ownerId, source: c.source, amount_minor: c.amountMinor.toString(), asset: c.asset });
    if (!recorded.fresh) return { depositId: recorded.depositId, credited: false };
    // An upto authorization is credited to be held at once: it never repays a debt (the hold would then fall short).
    const owed = c.repayDebt === false ? 0n : -(await balanceOf(m, PAYMENT, accountKey({ kind: 'debt', ownerId: c.ownerId }), c.asset, true));
    await applyPosting(m, PAYMENT, `deposit:${c.reference}`, 'deposit', Movements.deposit(c.ownerId, { minor: c.amountMinor, asset: c.asset }, owed > 0n ? owed : 0n), c.intentId);
    await this.outbox.append(m, WalletFunded, {
      depositId, ownerId: c.ownerId, reference: c.reference, source: c.source, amount: money(c.amountMinor, c.asset), repaidDebt: money(repaidOf(owed, c.amountMinor), c.asset),
    }, causationId ? { causationId } : undefined);
    return { depositId, credited: true };
  }

  /** A deposit reversed from outside: what the owner already spent of it becomes a debt (PAYMENT_DEBT_OUTSTANDING until repaid). */
  async chargeback(reference: string): Promise<'done' | 'unknown' | 'already'> {
    return this.dataSource.transaction(async (m) => {
      const d = await Deposits.lockByReference(m, reference);
      if (!d) return 'unknown';
      if (d.charged_back_at) return 'already';
      const available = await balanceOf(m, PAYMENT, accountKey({ kind: 'available', ownerId: d.owner_id }), d.asset, true);
      const amount = BigInt(d.amount_minor);
      await applyPosting(m, PAYMENT, `chargeback:${reference}`, 'chargeback', Movements.chargeback(d.owner_id, { minor: amount, asset: d.asset }, available));
      await this.outbox.append(m, WalletChargedBack, {
        ownerId: d.owner_id, reference, amount: money(amount, d.asset), fromAvailable: money(available < amount ? available : amount, d.asset),
      });
      await Deposits.markChargedBack(m, reference);
      return 'done';
    });
  }

  async wallet(ownerId: string): Promise<WalletView> {
    const rows = await Deposits.balances(this.dataSource, [accountKey({ kind: 'available', ownerId }), accountKey({ kind: 'held', ownerId }), accountKey({ kind: 'debt', ownerId })]);
    const byAsset = new Map<string, { asset: string; available: string; held: string; debt: string }>();
    for (const r of rows) {
      const b = byAsset.get(r.asset) ?? { asset: r.asset, available: '0', held: '0', debt: '0' };
      const kind = r.account.split(':').pop() as 'available' | 'held' | 'debt';
      b[kind] = kind === 'debt' ? (-BigInt(r.balance)).toString() : r.balance;
      byAsset.set(r.asset, b);
    }
    return { ownerId, balances: [...byAsset.values()] };
  }
}
