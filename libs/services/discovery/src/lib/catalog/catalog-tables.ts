import { type Tool } from '@modelcontextprotocol/client';
import { col, defineTable, type RowOf } from '@tollgate/persistence';
import { type SyncReport } from './sync-report';
import { type Listing } from './catalog-listing';

// Discovery's tables, each declared once: the repositories read them through `select`, and a medium test compares
// every declaration with what the migrations built.

/** `discovery.provider`: one row per upstream MCP server, how to reach it and how its last sync went. */
export const PROVIDER = defineTable('discovery.provider', {
  provider_id: col.text().required(),
  endpoint: col.text().nullable(),
  created_at: col.timestamptz().required(),
  last_synced_at: col.timestamptz().nullable(),
  transport: col.text<'http' | 'stdio'>().required(),
  command: col.text().nullable(),
  args: col.jsonb<string[]>().nullable(),
  defaults: col.jsonb<Listing>().required(),
  health: col.text<'healthy' | 'unhealthy'>().required(),
  last_sync_report: col.jsonb<SyncReport>().nullable(),
  last_sync_error: col.text().nullable(),
});
export type ProviderRow = RowOf<typeof PROVIDER>;
export const PROVIDER_COLUMNS = Object.keys(PROVIDER.columns) as (keyof ProviderRow)[];

/** `discovery.catalog_tool`: one row per catalog tool — its status, the version in force, the admin's listing overrides. */
export const CATALOG_TOOL = defineTable('discovery.catalog_tool', {
  tool_id: col.text().required(),
  name: col.text().required(),
  status: col.text<'active' | 'removed'>().required(),
  current_version: col.integer().required(),
  overrides: col.jsonb<Listing>().required(),
  reviewed_at: col.timestamptz().nullable(),
  published_digest: col.text().nullable(),
  created_at: col.timestamptz().required(),
  updated_at: col.timestamptz().required(),
});

/** `discovery.tool_version`: every contract a tool was listed with, approved, pending or retired (R3). */
export const TOOL_VERSION = defineTable('discovery.tool_version', {
  tool_id: col.text().required(),
  version: col.integer().required(),
  contract_hash: col.text().required(),
  title: col.text().nullable(),
  description: col.text().required(),
  input_schema: col.jsonb<Tool['inputSchema']>().required(),
  output_schema: col.jsonb<NonNullable<Tool['outputSchema']>>().nullable(),
  annotations: col.jsonb<NonNullable<Tool['annotations']>>().nullable(),
  /** How the tool may be run (`taskSupport`), as the provider lists it; part of the contract. */
  execution: col.jsonb<NonNullable<Tool['execution']>>().nullable(),
  listing: col.jsonb<Listing>().required(),
  provider_meta: col.jsonb<Record<string, unknown>>().nullable(),
  state: col.text<'approved' | 'pending' | 'retired'>().required(),
  note: col.text().required(),
  created_at: col.timestamptz().required(),
  decided_at: col.timestamptz().nullable(),
});
export type ToolVersionRow = RowOf<typeof TOOL_VERSION>;
export const TOOL_VERSION_COLUMNS = Object.keys(TOOL_VERSION.columns) as (keyof ToolVersionRow)[];

/** `discovery.tool_binding`: which providers serve a tool, under which contract. */
export const TOOL_BINDING = defineTable('discovery.tool_binding', {
  tool_id: col.text().required(),
  provider_id: col.text().required(),
  upstream_tool_name: col.text().required(),
  contract_hash: col.text().required(),
  removed_at: col.timestamptz().nullable(),
  updated_at: col.timestamptz().required(),
});

/** A live binding with its provider's connection (the catalog event carries both). */
export const BOUND_PROVIDER = defineTable('(binding with provider)', { ...TOOL_BINDING.columns, ...PROVIDER.columns });
