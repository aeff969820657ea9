import { BadRequestException, Controller, ForbiddenException, Get, HttpException, HttpStatus, NotFoundException, Param, ParseUUIDPipe, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { Caller, FinanceAuthGuard } from '../finance-access/finance-auth.guard';
import { type FinanceCaller } from '../finance-access/finance-caller';
import { type CallTimeline, GetCallTimelineUseCase } from './get-call-timeline.usecase';

/** How soon to ask again for a call the ledger has not recorded yet. */
const LEDGER_RETRY_MS = 500;

/** Finance view of one call: every recorded fact with its own timestamp and producing service. */
@ApiTags('finance')
@ApiBearerAuth()
@Controller('calls')
@UseGuards(FinanceAuthGuard)
export class CallsController {
  constructor(private readonly getTimeline: GetCallTimelineUseCase) {}

  /** Operators find a call by the agent's operation key (operation keys are operator-only: finance views leave them out). */
  @Get()
  async byOperationKey(@Caller() caller: FinanceCaller, @Query('operationKey') operationKey?: string) {
    if (caller.role !== 'operator') throw new ForbiddenException({ code: 'FINANCE_SCOPE_FORBIDDEN', message: 'Finding calls by operation key needs an operator token.' });
    if (typeof operationKey !== 'string' || operationKey.length === 0 || operationKey.length > 200) {
      throw new BadRequestException({ code: 'OPERATION_KEY_INVALID', message: 'operationKey (1 to 200 characters) is required.' });
    }
    return { calls: await this.getTimeline.byOperationKey(operationKey) };
  }

  @Get(':intentId')
  async get(@Caller() caller: FinanceCaller, @Param('intentId', new ParseUUIDPipe()) intentId: string): Promise<CallTimeline> {
    const timeline = await this.getTimeline.execute(intentId, caller);
    if (timeline) return timeline;
    // Known to the platform, not yet in the ledger (a read model that follows the event log within about a second).
    if (await this.getTimeline.knownButNotYetRecorded(intentId, caller)) {
      throw new HttpException({
        code: 'CALL_NOT_YET_IN_LEDGER', retryable: true, retryAfterMs: LEDGER_RETRY_MS,
        message: 'The platform has this call, but the ledger has not recorded it yet (it follows the event log, usually within a second). Retry shortly.',
      }, HttpStatus.NOT_FOUND);
    }
    // A call outside an owner-scoped token's owner is "not found" too: its existence is not theirs to learn.
    throw new NotFoundException({ code: 'CALL_NOT_FOUND', message: 'No call with this intentId has been recorded.' });
  }
}
