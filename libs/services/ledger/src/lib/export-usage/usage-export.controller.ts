import { once } from 'node:events';
import { BadRequestException, Controller, ForbiddenException, Get, Query, Res, UseGuards } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { ApiBearerAuth, ApiOkResponse, ApiProduces, ApiPropertyOptional, ApiTags } from '@nestjs/swagger';
import { IsISO8601, IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { type Response } from 'express';
import { Caller, FinanceAuthGuard } from '../finance-access/finance-auth.guard';
import { LEDGER } from '../ledger.constants';
import { type FinanceCaller, mayReadOwner } from '../finance-access/finance-caller';
import { SettledCalls } from './settled-calls.repository';
import { usageEvent } from './usage-events';

export class UsageExportDto {
  @ApiPropertyOptional({ description: 'Settled from (inclusive), ISO 8601.' }) @IsISO8601({ strict: true }) from!: string;
  @ApiPropertyOptional({ description: 'Settled before (exclusive), ISO 8601.' }) @IsISO8601({ strict: true }) to!: string;
  @ApiPropertyOptional({ description: 'Only this owner\'s calls (an owner-limited token: its own, always).' }) @IsOptional() @IsString() @MinLength(1) @MaxLength(200) ownerId?: string;
}

/** Where the events say they come from (CloudEvents `source`). */
const SOURCE = 'tollgate/ledger';

/**
 * The usage of settled calls as CloudEvents, one JSON object a line (`application/x-ndjson`): what a billing system
 * (Stripe meters, Lago, Orb, OpenMeter) ingests. Each event's id is its call's intentId, so a re-run export of the same
 * period is deduplicated by the meter and never bills twice; corrections come from the ledger, never as negative usage.
 */
@ApiTags('finance')
@ApiBearerAuth()
@Controller('usage')
@UseGuards(FinanceAuthGuard)
export class UsageExportController {
  constructor(@InjectDataSource(LEDGER) private readonly dataSource: DataSource) {}

  @Get('export')
  @ApiProduces('application/x-ndjson')
  @ApiOkResponse({ description: 'One CloudEvent (1.0, type io.tollgate.call.usage.v1) per settled call of [from, to), streamed.' })
  async export(@Caller() caller: FinanceCaller, @Query() q: UsageExportDto, @Res() res: Response): Promise<void> {
    const from = new Date(q.from);
    const to = new Date(q.to);
    if (from >= to) throw new BadRequestException({ code: 'PERIOD_INVALID', message: '`from` must be before `to`.' });
    const ownerId = (caller.role === 'finance' ? caller.ownerId : null) ?? q.ownerId;
    if (q.ownerId !== undefined && !mayReadOwner(caller, q.ownerId)) throw new ForbiddenException({ code: 'FINANCE_SCOPE_FORBIDDEN', message: 'This finance token is limited to one owner.' });
    res.status(200).setHeader('Content-Type', 'application/x-ndjson; charset=utf-8').setHeader('Cache-Control', 'no-store');
    try {
      for await (const call of SettledCalls.inPeriod(this.dataSource, from, to, ownerId)) {
        if (res.destroyed) return;
        if (!res.write(`${JSON.stringify(usageEvent(call, SOURCE))}\n`)) await once(res, 'drain');
      }
      res.end();
    } catch {
      res.destroy(); // headers are gone: a cut stream is the honest signal
    }
  }
}
