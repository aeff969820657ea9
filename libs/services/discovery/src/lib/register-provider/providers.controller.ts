import { Body, Controller, Get, Post, UseGuards } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { DISCOVERY } from '../discovery.constants';
import { DiscoveryAdminGuard } from '../discovery-admin.guard';
import { RegisterProviderDto } from './register-provider.dto';
import { type RegisteredTool, RegisterProviderUseCase } from './register-provider.usecase';

@Controller('admin/providers')
@UseGuards(DiscoveryAdminGuard)
export class ProvidersController {
  constructor(
    private readonly register: RegisterProviderUseCase,
    @InjectDataSource(DISCOVERY) private readonly dataSource: DataSource,
  ) {}

  /** Registers or re-syncs a provider; returns the catalog tools it serves. */
  @Post()
  async create(@Body() dto: RegisterProviderDto): Promise<{ providerId: string; tools: RegisteredTool[] }> {
    return { providerId: dto.providerId, tools: await this.register.execute(dto) };
  }

  @Get()
  async list(): Promise<{ providers: { providerId: string; endpoint: string; lastSyncedAt: string | null }[] }> {
    const rows: { provider_id: string; endpoint: string; last_synced_at: Date | null }[] = await this.dataSource.query(
      'SELECT provider_id, endpoint, last_synced_at FROM discovery.provider ORDER BY provider_id',
    );
    return { providers: rows.map((r) => ({ providerId: r.provider_id, endpoint: r.endpoint, lastSyncedAt: r.last_synced_at?.toISOString() ?? null })) };
  }
}
