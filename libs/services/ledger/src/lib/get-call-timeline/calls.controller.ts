import { Controller, Get, NotFoundException, Param, ParseUUIDPipe } from '@nestjs/common';
import { type CallTimeline, GetCallTimelineUseCase } from './get-call-timeline.usecase';

/** Finance view of one call: every recorded fact with its own timestamp and producing service. */
@Controller('calls')
export class CallsController {
  constructor(private readonly getTimeline: GetCallTimelineUseCase) {}

  @Get(':intentId')
  async get(@Param('intentId', new ParseUUIDPipe()) intentId: string): Promise<CallTimeline> {
    const timeline = await this.getTimeline.execute(intentId);
    if (!timeline) throw new NotFoundException({ code: 'CALL_NOT_FOUND', message: 'No call with this intentId has been recorded.' });
    return timeline;
  }
}
