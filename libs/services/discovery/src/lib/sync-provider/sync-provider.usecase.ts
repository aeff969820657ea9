import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import { returnedRows } from '@tollgate/persistence';
import { type Tool } from '@modelcontextprotocol/client';
import { contractChanges, contractHashOf, listUpstreamTools, type RefusedTool, UpstreamError, type UpstreamTarget } from '@tollgate/mcp-runtime';
import { createLogger } from '@tollgate/observability';
import { sanitizeListing } from '../catalog/catalog-listing';
import { PublishToolService } from '../catalog/publish-tool.service';
import { lockCatalogSync } from './catalog-sync.lock';
import { DISCOVERY } from '../discovery.constants';

/** Names the gateway itself serves; an upstream may not shadow them. */
export const RESERVED_TOOL_NAMES = new Set(['search_tools', 'get_tool', 'call_tool', 'assay_sign_in', 'assay_check_args', 'assay_check_sequence', 'assay_policy_decide']);
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
/** How long one sync may take (R6: an operation is bounded by a deadline). */
const SYNC_DEADLINE_MS = 30_000;

export interface SyncReport {
  providerId: string;
  ok: boolean;
  error?: string;
  pages?: number;
  tools: { name: string; version: number; contractHash: string; state: 'new' | 'unchanged' | 'pending_approval' }[];
  refused: RefusedTool[];
  removed: string[];
  syncedAt: string;
}

interface ProviderRow {
  provider_id: string;
  transport: 'http' | 'stdio';
  endpoint: string | null;
  command: string | null;
  args: string[] | null;
}

const logger = createLogger(DISCOVERY);

export function targetOf(p: ProviderRow): UpstreamTarget {
  return p.transport === 'stdio' ? { transport: 'stdio', command: p.command!, args: p.args ?? [] } : { transport: 'http', endpoint: p.endpoint! };
}

/**
 * Reads a provider's tools/list (R6 limits, deadline) and folds it into the
 * catalog in one transaction: new tools get version 1 (approved: registering
 * the provider was the admin's decision), a changed contract hash gets a new
 * PENDING version that is not used until an admin approves it (R3), tools the
 * provider no longer lists lose its binding, and a tool with no binding left
 * is `removed`. Every tool whose published state changed gets its event.
 */
@Injectable()
export class SyncProviderUseCase {
  constructor(
    @InjectDataSource(DISCOVERY) private readonly dataSource: DataSource,
    private readonly publisher: PublishToolService,
  ) {}

  async execute(providerId: string): Promise<SyncReport | undefined> {
    const [provider]: ProviderRow[] = await this.dataSource.query('SELECT * FROM discovery.provider WHERE provider_id = $1', [providerId]);
    if (!provider) return undefined;
    const syncedAt = new Date().toISOString();
    let listing;
    try {
      listing = await listUpstreamTools({ target: targetOf(provider), deadlineAt: Date.now() + SYNC_DEADLINE_MS });
    } catch (e) {
      const error = e instanceof UpstreamError ? e.message : 'tools/list failed';
      logger.warn({ providerId, error }, 'provider sync failed');
      const report: SyncReport = { providerId, ok: false, error, tools: [], refused: [], removed: [], syncedAt };
      await this.dataSource.transaction(async (m) => {
        await lockCatalogSync(m);
        await m.query(`UPDATE discovery.provider SET health = 'unhealthy', last_sync_error = $2, last_sync_report = $3 WHERE provider_id = $1`, [providerId, error, JSON.stringify(report)]);
        await this.republishBindingsOf(m, providerId);
      });
      return report;
    }
    const refused = [...listing.refused];
    const tools = listing.tools.filter((t) => {
      if (RESERVED_TOOL_NAMES.has(t.name)) refused.push({ name: t.name, reason: 'the name is reserved for the gateway' });
      else if (!TOOL_NAME.test(t.name)) refused.push({ name: t.name, reason: 'the name must be 1-128 letters, digits, _ . or -' });
      else return true;
      return false;
    });
    return this.dataSource.transaction(async (m) => {
      await lockCatalogSync(m);
      const report: SyncReport = { providerId, ok: true, pages: listing.pages, tools: [], refused, removed: [], syncedAt };
      const touched = new Set<string>();
      for (const tool of tools) report.tools.push(await this.foldTool(m, providerId, tool, touched));
      const gone = returnedRows<{ tool_id: string }>(await m.query(
        `UPDATE discovery.tool_binding SET removed_at = now(), updated_at = now()
          WHERE provider_id = $1 AND removed_at IS NULL AND NOT (upstream_tool_name = ANY($2)) RETURNING tool_id`,
        [providerId, tools.map((t) => t.name)],
      ));
      for (const g of gone) {
        touched.add(g.tool_id);
        report.removed.push(g.tool_id);
        await m.query(
          `UPDATE discovery.catalog_tool SET status = 'removed' WHERE tool_id = $1
             AND NOT EXISTS (SELECT 1 FROM discovery.tool_binding WHERE tool_id = $1 AND removed_at IS NULL)`,
          [g.tool_id],
        );
      }
      await m.query(
        `UPDATE discovery.provider SET health = 'healthy', last_synced_at = now(), last_sync_error = NULL, last_sync_report = $2 WHERE provider_id = $1`,
        [providerId, JSON.stringify(report)],
      );
      for (const toolId of touched) await this.publisher.publishIfChanged(m, toolId);
      logger.info({ providerId, tools: report.tools.length, refused: refused.length, removed: report.removed.length }, 'provider synced');
      return report;
    });
  }

  private async foldTool(m: EntityManager, providerId: string, tool: Tool, touched: Set<string>): Promise<SyncReport['tools'][number]> {
    const contractHash = contractHashOf(tool);
    const listing = sanitizeListing(tool._meta?.['tollgate/listing']);
    const meta = tool._meta ? Object.fromEntries(Object.entries(tool._meta).filter(([k]) => k !== 'tollgate/listing')) : null;
    const fields = [tool.title ?? null, tool.description ?? '', JSON.stringify(listing), meta && Object.keys(meta).length > 0 ? JSON.stringify(meta) : null];
    const contract = [JSON.stringify(tool.inputSchema), tool.outputSchema ? JSON.stringify(tool.outputSchema) : null, tool.annotations ? JSON.stringify(tool.annotations) : null];
    touched.add(tool.name);
    const [existing]: { tool_id: string }[] = await m.query('SELECT tool_id FROM discovery.catalog_tool WHERE tool_id = $1 FOR UPDATE', [tool.name]);
    let result: SyncReport['tools'][number];
    if (!existing) {
      await m.query('INSERT INTO discovery.catalog_tool (tool_id, name, current_version) VALUES ($1, $1, 1)', [tool.name]);
      await m.query(
        `INSERT INTO discovery.tool_version (tool_id, version, contract_hash, title, description, listing, provider_meta, input_schema, output_schema, annotations, state, note, decided_at)
         VALUES ($1, 1, $2, $3, $4, $5, $6, $7, $8, $9, 'approved', $10, now())`,
        [tool.name, contractHash, ...fields, ...contract, `First listed by provider ${providerId}.`],
      );
      result = { name: tool.name, version: 1, contractHash, state: 'new' };
    } else {
      const [known]: { version: number; state: string }[] = await m.query(
        'SELECT version, state FROM discovery.tool_version WHERE tool_id = $1 AND contract_hash = $2',
        [tool.name, contractHash],
      );
      if (known) {
        // Same contract: descriptive fields (not part of the hash) follow the provider.
        await m.query(
          'UPDATE discovery.tool_version SET title = $3, description = $4, listing = $5, provider_meta = $6 WHERE tool_id = $1 AND version = $2',
          [tool.name, known.version, ...fields],
        );
        result = { name: tool.name, version: known.version, contractHash, state: known.state === 'pending' ? 'pending_approval' : 'unchanged' };
      } else {
        const [current]: { version: number; input_schema: Tool['inputSchema']; output_schema: Tool['outputSchema'] | null; annotations: Tool['annotations'] | null }[] = await m.query(
          `SELECT version, input_schema, output_schema, annotations FROM discovery.tool_version WHERE tool_id = $1 AND state = 'approved'`,
          [tool.name],
        );
        const [{ next }]: { next: number }[] = await m.query('SELECT max(version) + 1 AS next FROM discovery.tool_version WHERE tool_id = $1', [tool.name]);
        const changed = current ? contractChanges({ inputSchema: current.input_schema, outputSchema: current.output_schema ?? undefined, annotations: current.annotations ?? undefined }, tool) : [];
        const note = `Contract changed (${changed.join(', ') || 'contract'}) as listed by provider ${providerId}; not used until an admin approves it.`;
        await m.query(
          `INSERT INTO discovery.tool_version (tool_id, version, contract_hash, title, description, listing, provider_meta, input_schema, output_schema, annotations, state, note)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'pending', $11)`,
          [tool.name, next, contractHash, ...fields, ...contract, note],
        );
        logger.info({ providerId, tool: tool.name, version: next }, 'contract change waits for approval');
        result = { name: tool.name, version: next, contractHash, state: 'pending_approval' };
      }
      await m.query(`UPDATE discovery.catalog_tool SET status = 'active' WHERE tool_id = $1 AND status = 'removed'`, [tool.name]);
    }
    await m.query(
      `INSERT INTO discovery.tool_binding (tool_id, provider_id, upstream_tool_name, contract_hash) VALUES ($1, $2, $1, $3)
       ON CONFLICT (tool_id, provider_id) DO UPDATE SET contract_hash = EXCLUDED.contract_hash, removed_at = NULL, updated_at = now()`,
      [tool.name, providerId, contractHash],
    );
    return result;
  }

  private async republishBindingsOf(m: EntityManager, providerId: string): Promise<void> {
    const rows: { tool_id: string }[] = await m.query('SELECT tool_id FROM discovery.tool_binding WHERE provider_id = $1 AND removed_at IS NULL', [providerId]);
    for (const r of rows) await this.publisher.publishIfChanged(m, r.tool_id);
  }
}
