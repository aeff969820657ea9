import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import { type Tool } from '@modelcontextprotocol/client';
import { contractChanges, contractHashOf, executionOf, listUpstreamTools, UpstreamError, type UpstreamTarget } from '@tollgate/mcp-runtime';
import { createLogger } from '@tollgate/observability';
import { listingRefusal, sanitizeListing } from '../catalog/catalog-listing';
import { PublishToolService } from '../catalog/publish-tool.service';
import { lockCatalogSync } from './catalog-sync.lock';
import { CatalogFold, type ContractFields, type DescriptiveFields } from './catalog-fold.repository';
import { type ProviderRow as FullProviderRow } from '../catalog/catalog-tables';
import { DISCOVERY } from '../discovery.constants';
import { type SyncReport } from '../catalog/sync-report';

export { type SyncReport } from '../catalog/sync-report';

/** Names the gateway itself serves; an upstream may not shadow them. */
export const RESERVED_TOOL_NAMES = new Set(['search_tools', 'get_tool', 'call_tool', 'assay_sign_in', 'assay_check_args', 'assay_check_sequence', 'assay_policy_decide']);
const TOOL_NAME = /^[A-Za-z0-9_.-]{1,128}$/;
/** How long one sync may take (R6: an operation is bounded by a deadline). */
const SYNC_DEADLINE_MS = 30_000;

type ProviderRow = Pick<FullProviderRow, 'provider_id' | 'transport' | 'endpoint' | 'command' | 'args'>;

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
    const provider = await CatalogFold.provider(this.dataSource, providerId);
    if (!provider) return undefined;
    const syncedAt = new Date().toISOString();
    let listing;
    try {
      listing = await listUpstreamTools({ target: targetOf(provider), deadlineAt: Date.now() + SYNC_DEADLINE_MS });
    } catch (e) {
      return this.unreachable(providerId, e instanceof UpstreamError ? e.message : 'tools/list failed', syncedAt);
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
      for (const toolId of await CatalogFold.dropUnlisted(m, providerId, tools.map((t) => t.name))) {
        touched.add(toolId);
        report.removed.push(toolId);
        await CatalogFold.removeIfUnbound(m, toolId);
      }
      await CatalogFold.markHealthy(m, providerId, report);
      for (const toolId of touched) await this.publisher.publishIfChanged(m, toolId);
      logger.info({ providerId, tools: report.tools.length, refused: refused.length, removed: report.removed.length }, 'provider synced');
      return report;
    });
  }

  /** The provider did not list its tools: marked unhealthy, its bindings republished (so calls avoid it). */
  private async unreachable(providerId: string, error: string, syncedAt: string): Promise<SyncReport> {
    logger.warn({ providerId, error }, 'provider sync failed');
    const report: SyncReport = { providerId, ok: false, error, tools: [], refused: [], removed: [], syncedAt };
    await this.dataSource.transaction(async (m) => {
      await lockCatalogSync(m);
      await CatalogFold.markUnhealthy(m, providerId, error, report);
      await this.republishBindingsOf(m, providerId);
    });
    return report;
  }

  private async foldTool(m: EntityManager, providerId: string, tool: Tool, touched: Set<string>): Promise<SyncReport['tools'][number]> {
    const contractHash = contractHashOf(tool);
    const listing = sanitizeListing(tool._meta?.['tollgate/listing']);
    const meta = tool._meta ? Object.fromEntries(Object.entries(tool._meta).filter(([k]) => k !== 'tollgate/listing')) : null;
    const fields: DescriptiveFields = [tool.title ?? null, tool.description ?? '', JSON.stringify(listing), meta && Object.keys(meta).length > 0 ? JSON.stringify(meta) : null];
    const execution = executionOf(tool);
    const contract: ContractFields = [JSON.stringify(tool.inputSchema), tool.outputSchema ? JSON.stringify(tool.outputSchema) : null, tool.annotations ? JSON.stringify(tool.annotations) : null, execution ? JSON.stringify(execution) : null];
    touched.add(tool.name);
    let result: SyncReport['tools'][number];
    if (!(await CatalogFold.lockTool(m, tool.name))) {
      await CatalogFold.insertTool(m, tool.name, contractHash, fields, contract, `First listed by provider ${providerId}.`);
      result = { name: tool.name, version: 1, contractHash, state: 'new' };
    } else {
      const known = await CatalogFold.versionWithContract(m, tool.name, contractHash);
      if (known) {
        // Same contract: descriptive fields (not part of the hash) follow the provider.
        await CatalogFold.updateDescription(m, tool.name, known.version, fields);
        result = { name: tool.name, version: known.version, contractHash, state: known.state === 'pending' ? 'pending_approval' : 'unchanged' };
      } else {
        const current = await CatalogFold.approvedContract(m, tool.name);
        const changed = current ? contractChanges({ inputSchema: current.input_schema, outputSchema: current.output_schema ?? undefined, annotations: current.annotations ?? undefined, execution: current.execution ?? undefined }, tool) : [];
        const note = `Contract changed (${changed.join(', ') || 'contract'}) as listed by provider ${providerId}; not used until an admin approves it.`;
        const next = await CatalogFold.insertPendingVersion(m, tool.name, contractHash, fields, contract, note);
        logger.info({ providerId, tool: tool.name, version: next }, 'contract change waits for approval');
        result = { name: tool.name, version: next, contractHash, state: 'pending_approval' };
      }
      await CatalogFold.reactivate(m, tool.name);
    }
    await CatalogFold.bind(m, tool.name, providerId, contractHash);
    const refusedBecause = listingRefusal(tool._meta?.['tollgate/listing']);
    if (refusedBecause) logger.warn({ providerId, tool: tool.name, problem: refusedBecause }, 'the provider\'s listing of the tool was refused');
    return refusedBecause ? { ...result, listingRefused: refusedBecause } : result;
  }

  private async republishBindingsOf(m: EntityManager, providerId: string): Promise<void> {
    for (const toolId of await CatalogFold.boundTools(m, providerId)) await this.publisher.publishIfChanged(m, toolId);
  }
}
