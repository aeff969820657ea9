import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { decimalAmount } from '@tollgate/contracts';
import { CSV_COLUMNS, csvLine, csvOf, type JournalFilter, type JournalLine } from './journal-query';
import { LEDGER } from '../ledger.constants';
import { type AccountBalance, type AccountScope, Journal } from './journal.repository';

/** Lines a JSON statement carries; the CSV form streams every line. */
export const STATEMENT_JSON_LINES = 10_000;

/** Minor units, and the same in the asset's decimals for people (`display`). */
export interface StatementAccount { account: string; asset: string; opening: string; movements: string; closing: string; display: { opening: string; movements: string; closing: string } }

/** Opening + movements per account and asset (pure): the closing balances a statement must show. */
export function statementAccounts(opening: readonly AccountBalance[], closing: readonly AccountBalance[]): StatementAccount[] {
  const key = (b: { account: string; asset: string }) => `${b.account}\u0000${b.asset}`;
  const open = new Map(opening.map((b) => [key(b), BigInt(b.balance)]));
  const close = new Map(closing.map((b) => [key(b), BigInt(b.balance)]));
  const keys = [...new Set([...open.keys(), ...close.keys()])].sort();
  return keys.map((k) => {
    const [account, asset] = k.split('\u0000') as [string, string];
    const o = open.get(k) ?? 0n;
    const c = close.get(k) ?? 0n;
    return {
      account, asset, opening: o.toString(), movements: (c - o).toString(), closing: c.toString(),
      display: { opening: decimalAmount(o, asset), movements: decimalAmount(c - o, asset), closing: decimalAmount(c, asset) },
    };
  });
}

const filterOf = (scope: AccountScope, from: Date, to: Date): JournalFilter =>
  ({ ...('ownerId' in scope ? { ownerId: scope.ownerId } : 'providerId' in scope ? { providerId: scope.providerId } : {}), from, to });

/** Statements for [from, to): opening balances, the period's lines, closing balances (opening + lines). */
@Injectable()
export class StatementUseCase {
  constructor(@InjectDataSource(LEDGER) private readonly dataSource: DataSource) {}

  async json(scope: AccountScope, from: Date, to: Date) {
    const [opening, closing] = await Promise.all([Journal.balancesBefore(this.dataSource, scope, from), Journal.balancesBefore(this.dataSource, scope, to)]);
    const lines: JournalLine[] = await Journal.page(this.dataSource, filterOf(scope, from, to), undefined, STATEMENT_JSON_LINES + 1);
    return {
      ...scope, from: from.toISOString(), to: to.toISOString(), accounts: statementAccounts(opening, closing),
      lines: lines.slice(0, STATEMENT_JSON_LINES), linesTruncated: lines.length > STATEMENT_JSON_LINES,
    };
  }

  csvHeader(): string {
    return csvLine(['row', ...CSV_COLUMNS]);
  }

  /** `opening` rows (at from), every `line`, `closing` rows (at to), for each account and asset. */
  async *csv(scope: AccountScope, from: Date, to: Date): AsyncGenerator<string> {
    const [opening, closing] = await Promise.all([Journal.balancesBefore(this.dataSource, scope, from), Journal.balancesBefore(this.dataSource, scope, to)]);
    const accounts = statementAccounts(opening, closing);
    const noCall = [null, null, null, null, null];
    for (const a of accounts) yield csvLine(['opening', from.toISOString(), null, null, null, null, null, a.account, a.asset, a.opening, a.display.opening, ...noCall]);
    for await (const l of Journal.all(this.dataSource, filterOf(scope, from, to))) yield `line,${csvOf(l)}`;
    for (const a of accounts) yield csvLine(['closing', to.toISOString(), null, null, null, null, null, a.account, a.asset, a.closing, a.display.closing, ...noCall]);
  }
}
