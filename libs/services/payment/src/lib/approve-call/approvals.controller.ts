import { Body, Controller, Get, HttpCode, NotFoundException, Param, ParseUUIDPipe, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { IsString, Length } from 'class-validator';
import { type DataSource } from 'typeorm';
import { adminTokenGuard } from '@tollgate/http';
import { PAYMENT, PAYMENT_ADMIN } from '../payment.constants';
import { Approvals } from './approvals.repository';

export class DecideApprovalDto {
  /** Who decides (recorded). */
  @IsString() @Length(1, 200) decidedBy!: string;
}

/**
 * Calls above an owner's approval threshold wait here (MCP_APPROVAL_REQUIRED
 * names the approvalId). Once approved, the agent's retry with the same
 * operation key, tool and arguments proceeds — once.
 */
@ApiTags('approvals')
@ApiBearerAuth()
@Controller('admin/approvals')
@UseGuards(adminTokenGuard(PAYMENT_ADMIN))
export class ApprovalsController {
  constructor(@InjectDataSource(PAYMENT) private readonly dataSource: DataSource) {}

  @Get()
  async list(@Query('ownerId') ownerId?: string, @Query('status') status = 'pending') {
    return { approvals: await Approvals.list(this.dataSource, { ...(ownerId !== undefined ? { ownerId } : {}), status }) };
  }

  @Post(':approvalId/approve')
  @HttpCode(200)
  approve(@Param('approvalId', new ParseUUIDPipe()) id: string, @Body() dto: DecideApprovalDto) {
    return this.decide(id, 'approved', dto.decidedBy);
  }

  @Post(':approvalId/deny')
  @HttpCode(200)
  deny(@Param('approvalId', new ParseUUIDPipe()) id: string, @Body() dto: DecideApprovalDto) {
    return this.decide(id, 'denied', dto.decidedBy);
  }

  private async decide(id: string, status: 'approved' | 'denied', by: string) {
    if (!(await Approvals.decide(this.dataSource, id, status, by))) throw new NotFoundException({ code: 'NO_PENDING_APPROVAL', message: 'No pending approval has this id.' });
    return { approvalId: id, status, decidedBy: by };
  }
}
