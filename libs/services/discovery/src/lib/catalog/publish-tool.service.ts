import { Inject, Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { CatalogToolChanged, type CatalogToolChangedPayload, digestOf } from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { DISCOVERY_OUTBOX } from '../discovery.constants';
import { catalogEventOf, type ToolState } from './catalog-listing';
import { ToolStates } from './tool-state.repository';

/**
 * Loads a tool's state and, when the event it yields differs from the last
 * one published, appends CatalogToolChanged to the outbox in the caller's
 * transaction. Re-syncing an unchanged provider therefore publishes nothing.
 */
@Injectable()
export class PublishToolService {
  constructor(@Inject(DISCOVERY_OUTBOX) private readonly outbox: OutboxWriter) {}

  async load(m: EntityManager, toolId: string): Promise<ToolState | undefined> {
    const loaded = await ToolStates.load(m, toolId);
    if (!loaded) return undefined;
    const { tool, versions, bindings } = loaded;
    return {
      toolId: tool.tool_id,
      name: tool.name,
      status: tool.status,
      reviewed: tool.reviewed_at !== null,
      overrides: tool.overrides,
      versions: versions.map((v) => ({
        version: v.version, contractHash: v.contract_hash, state: v.state, title: v.title, description: v.description,
        inputSchema: v.input_schema, outputSchema: v.output_schema, annotations: v.annotations, execution: v.execution, listing: v.listing,
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
    if (await ToolStates.markPublished(m, toolId, digest)) await this.outbox.append(m, CatalogToolChanged, event);
    return event;
  }
}
