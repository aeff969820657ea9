import { BadRequestException, Controller, ForbiddenException, Get, Param, Query, Res, UseGuards } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { ApiBearerAuth, ApiOkResponse, ApiProduces, ApiTags } from '@nestjs/swagger';
import { type Response } from 'express';
import { Caller, FinanceAuthGuard } from '../finance-access/finance-auth.guard';
import { LEDGER } from '../ledger.constants';
import { type FinanceCaller, mayReadAll, mayReadOwner } from '../finance-access/finance-caller';
import { scopedFilter } from './finance-scope';
import { CSV_COLUMNS, csvLine, csvOf, decodeCursor, DEFAULT_PAGE, encodeCursor, type JournalFilter } from './journal-query';
import { JournalQueryDto, PeriodDto } from './journal-query.dto';
import { type AccountScope, Journal } from './journal.repository';
import { StatementUseCase } from './statement.usecase';
import { streamCsv } from './csv-stream';

const forbidden = () => new ForbiddenException({ code: 'FINANCE_SCOPE_FORBIDDEN', message: 'This finance token is limited to one owner; these accounts are outside it.' });

function filterOf(q: JournalQueryDto): JournalFilter {
  const from = q.from === undefined ? undefined : new Date(q.from);
  const to = q.to === undefined ? undefined : new Date(q.to);
  if (from && to && from >= to) throw new BadRequestException({ code: 'PERIOD_INVALID', message: '`from` must be before `to`.' });
  const recordedFrom = q.recordedFrom === undefined ? undefined : new Date(q.recordedFrom);
  const recordedTo = q.recordedTo === undefined ? undefined : new Date(q.recordedTo);
  if (recordedFrom && recordedTo && recordedFrom >= recordedTo) throw new BadRequestException({ code: 'PERIOD_INVALID', message: '`recordedFrom` must be before `recordedTo`.' });
  const { account, ownerId, providerId, asset, intentId, kind, tool, agentId } = q;
  return Object.fromEntries(Object.entries({ account, ownerId, providerId, asset, intentId, kind, from, to, tool, agentId, recordedFrom, recordedTo })
    .filter(([, v]) => v !== undefined)) as JournalFilter;
}

/**
 * Finance: the journal with filters and cursor pages, its CSV export (streamed, any size), and
 * statements per owner and per provider for [from, to). Finance tokens only; an owner-limited token sees its owner.
 */
@ApiTags('finance')
@ApiBearerAuth()
@Controller()
@UseGuards(FinanceAuthGuard)
export class JournalController {
  constructor(
    @InjectDataSource(LEDGER) private readonly dataSource: DataSource,
    private readonly statements: StatementUseCase,
  ) {}

  @Get('journal')
  @ApiOkResponse({ description: '{ entries: [...], nextCursor } in the stable order: effective time, posting, line.' })
  async list(@Caller() caller: FinanceCaller, @Query() q: JournalQueryDto) {
    const filter = scopedFilter(caller, filterOf(q));
    if (filter === 'forbidden') throw forbidden();
    const after = q.cursor === undefined ? undefined : decodeCursor(q.cursor);
    if (q.cursor !== undefined && !after) throw new BadRequestException({ code: 'INVALID_CURSOR', message: 'This cursor was not made by this API.' });
    const limit = q.limit ?? DEFAULT_PAGE;
    const entries = await Journal.page(this.dataSource, filter, after, limit + 1);
    const more = entries.length > limit;
    const page = entries.slice(0, limit);
    const last = page[page.length - 1];
    return { entries: page, nextCursor: more && last ? encodeCursor(last) : null };
  }

  @Get('journal/summary')
  @ApiOkResponse({ description: '{ from, to, days: [{ day, asset, decimals, calls, volume, fees, providerPayables, refunds }] } per UTC day over [from, to) (default: the last 30 days); with by=owner also `groups`: per owner and asset, paid calls, spent and refunds; with by=provider, per provider and asset, calls settled and earned.' })
  async summary(@Caller() caller: FinanceCaller, @Query('from') from?: string, @Query('to') to?: string, @Query('by') by?: string) {
    if (!mayReadAll(caller)) throw forbidden();
    const end = to === undefined ? new Date() : new Date(to);
    const start = from === undefined ? new Date(end.getTime() - 30 * 86_400_000) : new Date(from);
    if (Number.isNaN(start.getTime()) || Number.isNaN(end.getTime()) || start >= end || end.getTime() - start.getTime() > 400 * 86_400_000) {
      throw new BadRequestException({ code: 'PERIOD_INVALID', message: 'from and to must be ISO 8601 times, from before to, at most 400 days apart.' });
    }
    if (by !== undefined && by !== 'day' && by !== 'provider' && by !== 'owner') {
      throw new BadRequestException({ code: 'SUMMARY_GROUP_INVALID', message: '`by` is day (default), provider or owner.' });
    }
    const days = await Journal.dailySummary(this.dataSource, start, end);
    const groups = by === 'provider' || by === 'owner' ? await Journal.summaryBy(this.dataSource, by, start, end) : undefined;
    return { from: start.toISOString(), to: end.toISOString(), days, ...(groups ? { by, groups } : {}) };
  }

  @Get('journal.csv')
  @ApiProduces('text/csv')
  @ApiOkResponse({ description: `The journal as CSV (${CSV_COLUMNS.join(', ')}), same filters, streamed.` })
  async csv(@Caller() caller: FinanceCaller, @Query() q: JournalQueryDto, @Res() res: Response): Promise<void> {
    const filter = scopedFilter(caller, filterOf(q));
    if (filter === 'forbidden') throw forbidden();
    await streamCsv(res, 'journal.csv', csvLine([...CSV_COLUMNS]), (async function* (rows) {
      for await (const l of rows) yield csvOf(l);
    })(Journal.all(this.dataSource, filter)));
  }

  @Get('statements/owners/:ownerId')
  @ApiOkResponse({ description: 'Opening balances at `from`, the period\'s lines, closing balances at `to`, per account and asset.' })
  owner(@Caller() caller: FinanceCaller, @Param('ownerId') ownerId: string, @Query() p: PeriodDto, @Res() res: Response) {
    if (!mayReadOwner(caller, ownerId)) throw forbidden();
    return this.statement({ ownerId }, p, res);
  }

  @Get('statements/providers/:providerId')
  @ApiOkResponse({ description: 'A provider\'s statement: payable opening, settlements and payouts, closing.' })
  provider(@Caller() caller: FinanceCaller, @Param('providerId') providerId: string, @Query() p: PeriodDto, @Res() res: Response) {
    if (!mayReadAll(caller)) throw forbidden();
    return this.statement({ providerId }, p, res);
  }

  private async statement(scope: AccountScope, p: PeriodDto, res: Response): Promise<void> {
    const from = new Date(p.from);
    const to = new Date(p.to);
    if (from >= to) throw new BadRequestException({ code: 'PERIOD_INVALID', message: '`from` must be before `to`.' });
    if (p.format === 'csv') return streamCsv(res, 'statement.csv', this.statements.csvHeader(), this.statements.csv(scope, from, to));
    res.json(await this.statements.json(scope, from, to));
  }
}
