import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { Calls } from '../calls/calls.repository';
import { GATEWAY } from '../gateway.constants';
import { type CatalogTool } from './catalog-access';

/**
 * `freeCallsLeftToday` for one agent: the tool's daily free quota less the
 * free calls the agent used since 00:00 UTC — calls whose hold was a free
 * one, the count payment allows against (the model's `usedFreeCall`). Null
 * for a tool without a free quota.
 */
@Injectable()
export class FreeCallsService {
  constructor(@InjectDataSource(GATEWAY) private readonly dataSource: DataSource) {}

  async leftToday(agentId: string, tools: CatalogTool[]): Promise<Map<string, number | null>> {
    const out = new Map<string, number | null>(tools.map((t) => [t.name, null]));
    const quota = tools.filter((t) => typeof t.freeCallsPerDay === 'number');
    if (quota.length === 0) return out;
    const used = await Calls.freeCallsUsedToday(this.dataSource, agentId, quota.map((t) => t.toolId));
    for (const t of quota) out.set(t.name, Math.max(0, t.freeCallsPerDay! - (used.get(t.toolId) ?? 0)));
    return out;
  }
}
