import { BadRequestException, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { type SyncReport, SyncProviderUseCase } from '../sync-provider/sync-provider.usecase';
import { DISCOVERY } from '../discovery.constants';
import { type RegisterProviderDto } from './register-provider.dto';
import { Providers } from './providers.repository';

/** Registers (or updates) a provider, then syncs its tools into the catalog. */
@Injectable()
export class RegisterProviderUseCase {
  constructor(
    @InjectDataSource(DISCOVERY) private readonly dataSource: DataSource,
    private readonly sync: SyncProviderUseCase,
  ) {}

  async execute(dto: RegisterProviderDto): Promise<SyncReport> {
    const transport = dto.transport ?? 'http';
    if (transport === 'http' && dto.command) throw new BadRequestException({ code: 'INVALID_PROVIDER', message: 'command is for stdio providers' });
    await Providers.save(this.dataSource, {
      provider_id: dto.providerId, transport, endpoint: transport === 'http' ? dto.endpoint ?? null : null, command: transport === 'stdio' ? dto.command ?? null : null,
      args: transport === 'stdio' ? dto.args ?? [] : null, defaults: dto.defaults ?? {},
    });
    return (await this.sync.execute(dto.providerId))!;
  }
}
