import { Body, Controller, Get, HttpCode, NotFoundException, Param, ParseUUIDPipe, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { IsIn, IsString, Length } from 'class-validator';
import { adminTokenGuard } from '@tollgate/http';
import { EXECUTION_ADMIN } from '../execution.constants';
import { ReconcileCallsUseCase } from './reconcile-calls.usecase';

export class ResolveCallDto {
  @IsIn(['happened', 'did_not_happen']) decision!: 'happened' | 'did_not_happen';
  /** Who decides (recorded). */
  @IsString() @Length(1, 200) operator!: string;
  /** Why (recorded). */
  @IsString() @Length(1, 1000) reason!: string;
}

/** Ops: calls whose outcome is unknown, and an operator's recorded decision on one. */
@ApiTags('reconciliation')
@ApiBearerAuth()
@Controller('admin/reconciliations')
@UseGuards(adminTokenGuard(EXECUTION_ADMIN))
export class ReconciliationsController {
  constructor(private readonly reconcile: ReconcileCallsUseCase) {}

  @Get()
  async list(@Query('status') status?: string) {
    const s = status === 'resolved' || status === 'all' ? status : 'open';
    return { reconciliations: await this.reconcile.list(s) };
  }

  @Post(':intentId/resolve')
  @HttpCode(200)
  async resolve(@Param('intentId', new ParseUUIDPipe()) intentId: string, @Body() dto: ResolveCallDto) {
    const out = await this.reconcile.resolve(intentId, { decision: dto.decision, by: dto.operator, at: new Date().toISOString(), why: dto.reason });
    if (out === 'not_open') throw new NotFoundException({ code: 'NO_OPEN_RECONCILIATION', message: 'This call has no open reconciliation.' });
    return { intentId, decision: dto.decision, resolvedBy: dto.operator };
  }
}
