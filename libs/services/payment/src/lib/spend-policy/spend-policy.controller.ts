import { Body, Controller, Get, Param, Put, UseGuards } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { IsBoolean, IsIn, IsOptional, Matches } from 'class-validator';
import { AMOUNT_MINOR_PATTERN } from '@tollgate/contracts';
import { adminTokenGuard } from '@tollgate/http';
import { PAYMENT, PAYMENT_ADMIN } from '../payment.constants';
import { SpendPolicies } from './spend-policies.repository';

export class SpendPolicyDto {
  @IsOptional() @IsBoolean() paused?: boolean;
  /** Most the agent may spend per period, in minor units; null or absent: no limit. */
  @IsOptional() @Matches(AMOUNT_MINOR_PATTERN) spendLimitMinor?: string | null;
  @IsOptional() @IsIn(['day', 'week', 'month']) period?: 'day' | 'week' | 'month';
  /** Calls priced above this need the owner's approval; null or absent: never. */
  @IsOptional() @Matches(AMOUNT_MINOR_PATTERN) approvalThresholdMinor?: string | null;
  @IsOptional() @Matches(/^[A-Z][A-Z0-9]{1,11}$/) asset?: string;
}

/** An owner's spend policy for one of its agents: pause, per-period limit, approval threshold. */
@ApiTags('spend policy')
@ApiBearerAuth()
@Controller('admin/owners/:ownerId/agents/:agentId/spend-policy')
@UseGuards(adminTokenGuard(PAYMENT_ADMIN))
export class SpendPolicyController {
  constructor(@InjectDataSource(PAYMENT) private readonly dataSource: DataSource) {}

  @Put()
  async put(@Param('ownerId') ownerId: string, @Param('agentId') agentId: string, @Body() dto: SpendPolicyDto) {
    await SpendPolicies.save(this.dataSource, ownerId, agentId, {
      paused: dto.paused ?? false, spend_limit_minor: dto.spendLimitMinor ?? null, period: dto.period ?? 'day', approval_threshold_minor: dto.approvalThresholdMinor ?? null, asset: dto.asset ?? 'USDC',
    });
    return this.get(ownerId, agentId);
  }

  @Get()
  async get(@Param('ownerId') ownerId: string, @Param('agentId') agentId: string) {
    const r = await SpendPolicies.find(this.dataSource, ownerId, agentId);
    return {
      ownerId, agentId, paused: r?.paused ?? false, period: r?.period ?? 'day', asset: r?.asset ?? 'USDC',
      spendLimitMinor: r?.spend_limit_minor ?? null, approvalThresholdMinor: r?.approval_threshold_minor ?? null, updatedAt: r?.updated_at ?? null,
    };
  }
}
