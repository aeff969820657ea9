import { BadRequestException, Controller, ForbiddenException, Get, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Caller, FinanceAuthGuard } from '../finance-access/finance-auth.guard';
import { type FinanceCaller, mayReadAll } from '../finance-access/finance-caller';
import { type ReconciliationReport, ReconciliationUseCase } from './reconciliation.usecase';

const DAY = 86_400;

/** Finance: the reconciliation report, across owners (owner-limited tokens are refused). */
@ApiTags('finance')
@ApiBearerAuth()
@Controller('reconciliation')
@UseGuards(FinanceAuthGuard)
export class ReconciliationController {
  constructor(private readonly reconciliation: ReconciliationUseCase) {}

  @Get()
  @ApiOperation({ summary: 'Payment vs settlement vs journal by account; calls not terminal after olderThanSeconds (default 3600); open unknown outcomes; parked events.' })
  report(@Caller() caller: FinanceCaller, @Query('olderThanSeconds') olderThan?: string): Promise<ReconciliationReport> {
    if (!mayReadAll(caller)) throw new ForbiddenException({ code: 'FINANCE_SCOPE_FORBIDDEN', message: 'This finance token is limited to one owner; the reconciliation report covers every owner.' });
    if (olderThan !== undefined && !/^\d{1,7}$/.test(olderThan)) {
      throw new BadRequestException({ code: 'OLDER_THAN_INVALID', message: `olderThanSeconds must be an integer from 0 to ${30 * DAY}.` });
    }
    const seconds = olderThan === undefined ? 3600 : Number(olderThan);
    if (seconds > 30 * DAY) throw new BadRequestException({ code: 'OLDER_THAN_INVALID', message: `olderThanSeconds must be an integer from 0 to ${30 * DAY}.` });
    return this.reconciliation.report(seconds);
  }
}
