import { BadRequestException, Body, Controller, Get, Param, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { IsISO8601 } from 'class-validator';
import { adminTokenGuard } from '@tollgate/http';
import { SETTLEMENT_ADMIN } from '../settlement.constants';
import { IssuePayoutUseCase } from './issue-payout.usecase';

export class PayoutPeriodDto {
  @IsISO8601({ strict: true }) periodStart!: string;
  @IsISO8601({ strict: true }) periodEnd!: string;
}

function period(start: string | undefined, end: string | undefined): [Date, Date] {
  const from = new Date(start ?? '');
  const to = new Date(end ?? '');
  if (Number.isNaN(from.getTime()) || Number.isNaN(to.getTime()) || from >= to) {
    throw new BadRequestException({ code: 'PERIOD_INVALID', message: 'periodStart and periodEnd must be ISO 8601 times, start before end.' });
  }
  return [from, to];
}

/** Finance: provider statements per period and payouts of their net. */
@ApiTags('payouts')
@ApiBearerAuth()
@Controller('admin/providers/:providerId')
@UseGuards(adminTokenGuard(SETTLEMENT_ADMIN))
export class PayoutsController {
  constructor(private readonly payouts: IssuePayoutUseCase) {}

  @Get('statement')
  statement(@Param('providerId') providerId: string, @Query('periodStart') start?: string, @Query('periodEnd') end?: string) {
    return this.payouts.statement(providerId, ...period(start, end));
  }

  @Post('payouts')
  payout(@Param('providerId') providerId: string, @Body() dto: PayoutPeriodDto) {
    return this.payouts.payout(providerId, ...period(dto.periodStart, dto.periodEnd));
  }
}
