import { Body, Controller, Get, HttpCode, NotFoundException, Param, ParseUUIDPipe, Post, Query, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { IsString, Length } from 'class-validator';
import { type DataSource } from 'typeorm';
import { adminTokenGuard } from '@tollgate/http';
import { returnedRows } from '@tollgate/persistence';
import { PAYMENT, PAYMENT_ADMIN } from '../payment.constants';

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
    const rows: Record<string, unknown>[] = await this.dataSource.query(
      `SELECT approval_id AS "approvalId", owner_id AS "ownerId", agent_id AS "agentId", tool_id AS "toolId", operation_key AS "operationKey",
              json_build_object('amountMinor', amount_minor::text, 'asset', asset) AS amount, status, decided_by AS "decidedBy", decided_at AS "decidedAt", created_at AS "createdAt"
         FROM payment.approval WHERE ($1::text IS NULL OR owner_id = $1) AND ($2 = 'all' OR status = $2) ORDER BY created_at`,
      [ownerId ?? null, status],
    );
    return { approvals: rows };
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
    const rows = returnedRows(await this.dataSource.query(
      `UPDATE payment.approval SET status = $2, decided_by = $3, decided_at = now() WHERE approval_id = $1 AND status = 'pending' RETURNING approval_id`,
      [id, status, by],
    ));
    if (rows.length === 0) throw new NotFoundException({ code: 'NO_PENDING_APPROVAL', message: 'No pending approval has this id.' });
    return { approvalId: id, status, decidedBy: by };
  }
}
