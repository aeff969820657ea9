import { BadRequestException, Controller, ForbiddenException, Get, Param, Query, UseGuards } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { Caller, FinanceAuthGuard } from '../finance-access/finance-auth.guard';
import { LEDGER } from '../ledger.constants';
import { type FinanceCaller, mayReadAll, mayReadOwner } from '../finance-access/finance-caller';
import { type AccountScope, Journal } from '../query-journal/journal.repository';

const outOfScope = () => new ForbiddenException({ code: 'FINANCE_SCOPE_FORBIDDEN', message: 'This finance token is limited to one owner; these accounts are outside it.' });

function asOfTime(asOf?: string): Date {
  if (asOf === undefined) return new Date();
  const t = new Date(asOf);
  if (Number.isNaN(t.getTime())) throw new BadRequestException({ code: 'AS_OF_INVALID', message: 'asOf must be an ISO 8601 time.' });
  return t;
}

/**
 * Finance: balances of the double-entry journal as of any time. `totals` is
 * the sum per asset over every account — zero whenever every posting balanced
 * (the platform's clearing account carries a capture between payment's half and
 * settlement's half).
 */
@ApiTags('finance')
@ApiBearerAuth()
@Controller('balances')
@UseGuards(FinanceAuthGuard)
export class BalancesController {
  constructor(@InjectDataSource(LEDGER) private readonly dataSource: DataSource) {}

  @Get()
  async all(@Caller() caller: FinanceCaller, @Query('asOf') asOf?: string) {
    if (!mayReadAll(caller)) throw outOfScope();
    const at = asOfTime(asOf);
    const rows = await Journal.balancesAsOf(this.dataSource, { all: true }, at);
    const totals = new Map<string, bigint>();
    for (const r of rows) totals.set(r.asset, (totals.get(r.asset) ?? 0n) + BigInt(r.balance));
    return { asOf: at.toISOString(), accounts: rows, totals: [...totals].map(([asset, sum]) => ({ asset, sum: sum.toString() })) };
  }

  @Get('owners/:ownerId')
  owner(@Caller() caller: FinanceCaller, @Param('ownerId') ownerId: string, @Query('asOf') asOf?: string) {
    if (!mayReadOwner(caller, ownerId)) throw outOfScope();
    return this.scoped({ ownerId }, asOf);
  }

  @Get('providers/:providerId')
  provider(@Caller() caller: FinanceCaller, @Param('providerId') providerId: string, @Query('asOf') asOf?: string) {
    if (!mayReadAll(caller)) throw outOfScope();
    return this.scoped({ providerId }, asOf);
  }

  private async scoped(scope: AccountScope, asOf?: string) {
    const at = asOfTime(asOf);
    return { asOf: at.toISOString(), accounts: await Journal.balancesAsOf(this.dataSource, scope, at) };
  }
}
