import { BadRequestException, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { DISCOVERY } from '../discovery.constants';
import { type SyncReport, SyncProviderUseCase } from '../sync-provider/sync-provider.usecase';
import { type RegisterProviderDto } from './register-provider.dto';

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
    await this.dataSource.query(
      `INSERT INTO discovery.provider (provider_id, transport, endpoint, command, args, defaults) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (provider_id) DO UPDATE SET transport = EXCLUDED.transport, endpoint = EXCLUDED.endpoint, command = EXCLUDED.command,
         args = EXCLUDED.args, defaults = EXCLUDED.defaults`,
      [dto.providerId, transport, transport === 'http' ? dto.endpoint : null, transport === 'stdio' ? dto.command : null,
        transport === 'stdio' ? JSON.stringify(dto.args ?? []) : null, JSON.stringify(dto.defaults ?? {})],
    );
    return (await this.sync.execute(dto.providerId))!;
  }
}
