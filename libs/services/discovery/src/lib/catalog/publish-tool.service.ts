import { Inject, Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { returnedRows } from '@tollgate/persistence';
import { CatalogToolChanged, type CatalogToolChangedPayload, digestOf } from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { DISCOVERY_OUTBOX } from '../discovery.constants';
import { catalogEventOf, type Listing, type ToolState } from './catalog-listing';

interface VersionRow {
  version: number; contract_hash: string; state: 'approved' | 'pending' | 'retired'; title: string | null; description: string;
  input_schema: Record<string, unknown>; output_schema: Record<string, unknown> | null; annotations: Record<string, unknown> | null;
  listing: Listing; provider_meta: Record<string, unknown> | null; note: string; created_at: Date; decided_at: Date | null;
}

/**
 * Loads a tool's state and, when the event it yields differs from the last
 * one published, appends CatalogToolChanged to the outbox in the caller's
 * transaction. Re-syncing an unchanged provider therefore publishes nothing.
 */
@Injectable()
export class PublishToolService {
  constructor(@Inject(DISCOVERY_OUTBOX) private readonly outbox: OutboxWriter) {}

  async load(m: EntityManager, toolId: string): Promise<ToolState | undefined> {
    const [tool]: { tool_id: string; name: string; status: 'active' | 'removed'; reviewed_at: Date | null; overrides: Listing }[] = await m.query(
      'SELECT tool_id, name, status, reviewed_at, overrides FROM discovery.catalog_tool WHERE tool_id = $1',
      [toolId],
    );
    if (!tool) return undefined;
    const versions: VersionRow[] = await m.query('SELECT * FROM discovery.tool_version WHERE tool_id = $1 ORDER BY version', [toolId]);
    const bindings: {
      provider_id: string; upstream_tool_name: string; contract_hash: string; transport: 'http' | 'stdio'; endpoint: string | null;
      command: string | null; args: string[] | null; health: 'healthy' | 'unhealthy'; defaults: Listing;
    }[] = await m.query(
      `SELECT b.provider_id, b.upstream_tool_name, b.contract_hash, p.transport, p.endpoint, p.command, p.args, p.health, p.defaults
         FROM discovery.tool_binding b JOIN discovery.provider p ON p.provider_id = b.provider_id
        WHERE b.tool_id = $1 AND b.removed_at IS NULL ORDER BY b.provider_id`,
      [toolId],
    );
    return {
      toolId: tool.tool_id,
      name: tool.name,
      status: tool.status,
      reviewed: tool.reviewed_at !== null,
      overrides: tool.overrides,
      versions: versions.map((v) => ({
        version: v.version, contractHash: v.contract_hash, state: v.state, title: v.title, description: v.description,
        inputSchema: v.input_schema, outputSchema: v.output_schema, annotations: v.annotations, listing: v.listing,
        providerMeta: v.provider_meta, note: v.note, at: (v.decided_at ?? v.created_at).toISOString(),
      })),
      bindings: bindings.map((b) => ({
        inputProperties: Object.keys((versions.find((v) => v.contract_hash === b.contract_hash)?.input_schema['properties'] as object | undefined) ?? {}),
        providerId: b.provider_id, upstreamToolName: b.upstream_tool_name, contractHash: b.contract_hash, transport: b.transport,
        ...(b.transport === 'http' ? { endpoint: b.endpoint! } : { command: b.command!, args: b.args ?? [] }),
        health: b.health, providerDefaults: b.defaults,
      })),
    };
  }

  /** Publishes the tool's current state if it changed; returns the event either way. */
  async publishIfChanged(m: EntityManager, toolId: string): Promise<CatalogToolChangedPayload | undefined> {
    const state = await this.load(m, toolId);
    if (!state) return undefined;
    const event = catalogEventOf(state);
    const digest = digestOf(event);
    const rows = returnedRows(await m.query(
      `UPDATE discovery.catalog_tool SET published_digest = $2, updated_at = now()
        WHERE tool_id = $1 AND published_digest IS DISTINCT FROM $2 RETURNING tool_id`,
      [toolId, digest],
    ));
    if (rows.length > 0) await this.outbox.append(m, CatalogToolChanged, event);
    return event;
  }
}
