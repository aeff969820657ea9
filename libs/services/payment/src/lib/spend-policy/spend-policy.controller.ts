import { Body, Controller, Get, Param, Put, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { InjectDataSource } from '@nestjs/typeorm';
import { IsBoolean, IsIn, IsOptional, Matches } from 'class-validator';
import { type DataSource } from 'typeorm';
import { AMOUNT_MINOR_PATTERN } from '@tollgate/contracts';
import { adminTokenGuard } from '@tollgate/http';
import { PAYMENT, PAYMENT_ADMIN } from '../payment.constants';

export class SpendPolicyDto {
  @IsOptional() @IsBoolean() paused?: boolean;
  /** Most the agent may spend per period, in minor units; null or absent: no limit. */
  @IsOptional() @Matches(AMOUNT_MINOR_PATTERN) spendLimitMinor?: string | null;
  @IsOptional() @IsIn(['day', 'week', 'month']) period?: 'day' | 'week' | 'month';
  /** Calls priced above this need the owner's approval; null or absent: never. */
  @IsOptional() @Matches(AMOUNT_MINOR_PATTERN) approvalThresholdMinor?: string | null;
  @IsOptional() @Matches(/^[A-Z][A-Z0-9]{1,11}$/) asset?: string;
}

interface PolicyRow { paused: boolean; spend_limit_minor: string | null; period: string; approval_threshold_minor: string | null; asset: string; updated_at: Date }

/** An owner's spend policy for one of its agents: pause, per-period limit, approval threshold. */
@ApiTags('spend policy')
@ApiBearerAuth()
@Controller('admin/owners/:ownerId/agents/:agentId/spend-policy')
@UseGuards(adminTokenGuard(PAYMENT_ADMIN))
export class SpendPolicyController {
  constructor(@InjectDataSource(PAYMENT) private readonly dataSource: DataSource) {}

  @Put()
  async put(@Param('ownerId') ownerId: string, @Param('agentId') agentId: string, @Body() dto: SpendPolicyDto) {
    await this.dataSource.query(
      `INSERT INTO payment.spend_policy (owner_id, agent_id, paused, spend_limit_minor, period, approval_threshold_minor, asset)
       VALUES ($1, $2, $3, $4, $5, $6, $7)
       ON CONFLICT (owner_id, agent_id) DO UPDATE SET paused = EXCLUDED.paused, spend_limit_minor = EXCLUDED.spend_limit_minor, period = EXCLUDED.period,
         approval_threshold_minor = EXCLUDED.approval_threshold_minor, asset = EXCLUDED.asset, updated_at = now()`,
      [ownerId, agentId, dto.paused ?? false, dto.spendLimitMinor ?? null, dto.period ?? 'day', dto.approvalThresholdMinor ?? null, dto.asset ?? 'USDC'],
    );
    return this.get(ownerId, agentId);
  }

  @Get()
  async get(@Param('ownerId') ownerId: string, @Param('agentId') agentId: string) {
    const [r]: PolicyRow[] = await this.dataSource.query('SELECT * FROM payment.spend_policy WHERE owner_id = $1 AND agent_id = $2', [ownerId, agentId]);
    return {
      ownerId, agentId, paused: r?.paused ?? false, period: r?.period ?? 'day', asset: r?.asset ?? 'USDC',
      spendLimitMinor: r?.spend_limit_minor ?? null, approvalThresholdMinor: r?.approval_threshold_minor ?? null, updatedAt: r?.updated_at ?? null,
    };
  }
}
