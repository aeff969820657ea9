import { Body, Controller, Get, HttpCode, NotFoundException, Param, Post, UseGuards } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { ApiBearerAuth, ApiTags } from '@nestjs/swagger';
import { DiscoveryAdminGuard } from '../discovery-admin.guard';
import { DISCOVERY } from '../discovery.constants';
import { type SyncReport, SyncProviderUseCase } from '../sync-provider/sync-provider.usecase';
import { ProviderSyncScheduler } from '../watch-providers/provider-sync.scheduler';
import { RegisterProviderDto } from './register-provider.dto';
import { RegisterProviderUseCase } from './register-provider.usecase';
import { Providers } from './providers.repository';

@ApiTags('providers')
@ApiBearerAuth()
@Controller('admin/providers')
@UseGuards(DiscoveryAdminGuard)
export class ProvidersController {
  constructor(
    private readonly register: RegisterProviderUseCase,
    private readonly sync: SyncProviderUseCase,
    private readonly scheduler: ProviderSyncScheduler,
    @InjectDataSource(DISCOVERY) private readonly dataSource: DataSource,
  ) {}

  /** Registers or updates a provider and syncs it; returns the sync report (tools, refused tools, removals). */
  @Post()
  async create(@Body() dto: RegisterProviderDto): Promise<SyncReport> {
    const report = await this.register.execute(dto);
    this.scheduler.watch(dto.providerId);
    return report;
  }

  /** Re-syncs a provider now. */
  @Post(':providerId/sync')
  @HttpCode(200)
  async resync(@Param('providerId') providerId: string): Promise<SyncReport> {
    const report = await this.sync.execute(providerId);
    if (!report) throw new NotFoundException({ code: 'PROVIDER_NOT_FOUND', message: 'No such provider.' });
    return report;
  }

  @Get()
  async list() {
    const rows = await Providers.all(this.dataSource, );
    return {
      providers: rows.map((r) => ({
        providerId: r.provider_id, transport: r.transport, endpoint: r.endpoint, command: r.command, health: r.health,
        lastSyncedAt: r.last_synced_at?.toISOString() ?? null, lastSyncError: r.last_sync_error, lastSyncReport: r.last_sync_report,
      })),
    };
  }
}
