import { Controller, Get, NotFoundException, Param, ParseUUIDPipe, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { Caller, FinanceAuthGuard } from '../finance-access/finance-auth.guard';
import { type FinanceCaller } from '../finance-access/finance-caller';
import { type CallTimeline, GetCallTimelineUseCase } from './get-call-timeline.usecase';

/** Finance view of one call: every recorded fact with its own timestamp and producing service. */
@ApiTags('finance')
@ApiBearerAuth()
@Controller('calls')
@UseGuards(FinanceAuthGuard)
export class CallsController {
  constructor(private readonly getTimeline: GetCallTimelineUseCase) {}

  @Get(':intentId')
  async get(@Caller() caller: FinanceCaller, @Param('intentId', new ParseUUIDPipe()) intentId: string): Promise<CallTimeline> {
    const timeline = await this.getTimeline.execute(intentId, caller);
    // A call outside an owner-scoped token's owner is "not found" too: its existence is not theirs to learn.
    if (!timeline) throw new NotFoundException({ code: 'CALL_NOT_FOUND', message: 'No call with this intentId has been recorded.' });
    return timeline;
  }
}
