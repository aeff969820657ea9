import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { GATEWAY } from '../gateway.constants';
import { type CatalogTool } from './catalog-access';

/**
 * `freeCallsLeftToday` for one agent: the tool's daily free quota less the
 * agent's calls of it accepted since 00:00 UTC. Null for a tool without a
 * free quota. (The payment service decides what a call costs; this is the
 * agent-facing view of the same count.)
 */
@Injectable()
export class FreeCallsService {
  constructor(@InjectDataSource(GATEWAY) private readonly dataSource: DataSource) {}

  async leftToday(agentId: string, tools: CatalogTool[]): Promise<Map<string, number | null>> {
    const out = new Map<string, number | null>(tools.map((t) => [t.name, null]));
    const quota = tools.filter((t) => typeof t.freeCallsPerDay === 'number');
    if (quota.length === 0) return out;
    const rows: { tool_id: string; used: string }[] = await this.dataSource.query(
      `SELECT tool_id, count(*) AS used FROM gateway.call
        WHERE agent_id = $1 AND tool_id = ANY($2) AND error IS NULL AND created_at >= date_trunc('day', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC'
        GROUP BY tool_id`,
      [agentId, quota.map((t) => t.toolId)],
    );
    const used = new Map(rows.map((r) => [r.tool_id, Number(r.used)]));
    for (const t of quota) out.set(t.name, Math.max(0, t.freeCallsPerDay! - (used.get(t.toolId) ?? 0)));
    return out;
  }
}
