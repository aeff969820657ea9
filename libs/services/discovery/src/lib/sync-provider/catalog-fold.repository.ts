import { type EntityManager } from 'typeorm';
import { col, defineTable, select } from '@tollgate/persistence';
import { CATALOG_TOOL, PROVIDER, PROVIDER_COLUMNS, type ProviderRow, TOOL_BINDING, TOOL_VERSION, type ToolVersionRow } from '../catalog/catalog-tables';

type Executor = Pick<EntityManager, 'query'>;

/** A version's descriptive fields as stored: title, description, listing (JSON), provider meta (JSON or null). */
export type DescriptiveFields = [title: string | null, description: string, listing: string, providerMeta: string | null];
/** A version's contract as stored (JSON): input schema, output schema, annotations, execution. */
export type ContractFields = [inputSchema: string, outputSchema: string | null, annotations: string | null, execution: string | null];

/** The approved version's contract, to name what a new listing changes. */
export type ApprovedContract = Pick<ToolVersionRow, 'version' | 'input_schema' | 'output_schema' | 'annotations' | 'execution'>;

const NEXT = defineTable('(next version)', { next: col.integer().required() });

/** The statements of a provider sync: folding its listing into `discovery.catalog_tool`, `tool_version` and `tool_binding`. */
export const CatalogFold = {
  async provider(db: Executor, providerId: string): Promise<ProviderRow | undefined> {
    return (await select(db, PROVIDER, PROVIDER_COLUMNS, 'SELECT * FROM discovery.provider WHERE provider_id = $1', [providerId]))[0];
  },

  async markUnhealthy(m: Executor, providerId: string, error: string, report: object): Promise<void> {
    await m.query(`UPDATE discovery.provider SET health = 'unhealthy', last_sync_error = $2, last_sync_report = $3 WHERE provider_id = $1`, [providerId, error, JSON.stringify(report)]);
  },

  async markHealthy(m: Executor, providerId: string, report: object): Promise<void> {
    await m.query(
      `UPDATE discovery.provider SET health = 'healthy', last_synced_at = now(), last_sync_error = NULL, last_sync_report = $2 WHERE provider_id = $1`,
      [providerId, JSON.stringify(report)]);
  },

  /** Drops the provider's bindings of tools it no longer lists; the tools they were bindings of. */
  async dropUnlisted(m: Executor, providerId: string, listed: readonly string[]): Promise<string[]> {
    return (await select(m, TOOL_BINDING, ['tool_id'],
      `UPDATE discovery.tool_binding SET removed_at = now(), updated_at = now()
        WHERE provider_id = $1 AND removed_at IS NULL AND NOT (upstream_tool_name = ANY($2)) RETURNING tool_id`,
      [providerId, listed])).map((r) => r.tool_id);
  },

  /** A tool with no binding left is removed from the catalog. */
  async removeIfUnbound(m: Executor, toolId: string): Promise<void> {
    await m.query(
      `UPDATE discovery.catalog_tool SET status = 'removed' WHERE tool_id = $1
         AND NOT EXISTS (SELECT 1 FROM discovery.tool_binding WHERE tool_id = $1 AND removed_at IS NULL)`, [toolId]);
  },

  /** Whether the tool is in the catalog (its row locked for the fold). */
  async lockTool(m: Executor, toolId: string): Promise<boolean> {
    return (await select(m, CATALOG_TOOL, ['tool_id'], 'SELECT tool_id FROM discovery.catalog_tool WHERE tool_id = $1 FOR UPDATE', [toolId])).length > 0;
  },

  /** A new tool, its first version approved (registering the provider was the admin's decision). */
  async insertTool(m: Executor, toolId: string, contractHash: string, fields: DescriptiveFields, contract: ContractFields, note: string): Promise<void> {
    await m.query('INSERT INTO discovery.catalog_tool (tool_id, name, current_version) VALUES ($1, $1, 1)', [toolId]);
    await m.query(
      `INSERT INTO discovery.tool_version (tool_id, version, contract_hash, title, description, listing, provider_meta, input_schema, output_schema, annotations, execution, state, note, decided_at)
       VALUES ($1, 1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 'approved', $11, now())`,
      [toolId, contractHash, ...fields, ...contract, note]);
  },

  /** The version with this contract, if the tool has one. */
  async versionWithContract(m: Executor, toolId: string, contractHash: string): Promise<Pick<ToolVersionRow, 'version' | 'state'> | undefined> {
    return (await select(m, TOOL_VERSION, ['version', 'state'], 'SELECT version, state FROM discovery.tool_version WHERE tool_id = $1 AND contract_hash = $2', [toolId, contractHash]))[0];
  },

  /** Same contract: descriptive fields (not part of the hash) follow the provider. */
  async updateDescription(m: Executor, toolId: string, version: number, fields: DescriptiveFields): Promise<void> {
    await m.query('UPDATE discovery.tool_version SET title = $3, description = $4, listing = $5, provider_meta = $6 WHERE tool_id = $1 AND version = $2', [toolId, version, ...fields]);
  },

  async approvedContract(m: Executor, toolId: string): Promise<ApprovedContract | undefined> {
    return (await select(m, TOOL_VERSION, ['version', 'input_schema', 'output_schema', 'annotations', 'execution'],
      `SELECT version, input_schema, output_schema, annotations, execution FROM discovery.tool_version WHERE tool_id = $1 AND state = 'approved'`, [toolId]))[0];
  },

  /** A changed contract as a new PENDING version (R3), numbered after the last; its number. */
  async insertPendingVersion(m: Executor, toolId: string, contractHash: string, fields: DescriptiveFields, contract: ContractFields, note: string): Promise<number> {
    const next = (await select(m, NEXT, ['next'], 'SELECT max(version) + 1 AS next FROM discovery.tool_version WHERE tool_id = $1', [toolId]))[0]!.next;
    await m.query(
      `INSERT INTO discovery.tool_version (tool_id, version, contract_hash, title, description, listing, provider_meta, input_schema, output_schema, annotations, execution, state, note)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, 'pending', $12)`,
      [toolId, next, contractHash, ...fields, ...contract, note]);
    return next;
  },

  async reactivate(m: Executor, toolId: string): Promise<void> {
    await m.query(`UPDATE discovery.catalog_tool SET status = 'active' WHERE tool_id = $1 AND status = 'removed'`, [toolId]);
  },

  /** The provider's binding of the tool, (re)bound to this contract. */
  async bind(m: Executor, toolId: string, providerId: string, contractHash: string): Promise<void> {
    await m.query(
      `INSERT INTO discovery.tool_binding (tool_id, provider_id, upstream_tool_name, contract_hash) VALUES ($1, $2, $1, $3)
       ON CONFLICT (tool_id, provider_id) DO UPDATE SET contract_hash = EXCLUDED.contract_hash, removed_at = NULL, updated_at = now()`,
      [toolId, providerId, contractHash]);
  },

  /** The tools the provider is bound to now. */
  async boundTools(m: Executor, providerId: string): Promise<string[]> {
    return (await select(m, TOOL_BINDING, ['tool_id'], 'SELECT tool_id FROM discovery.tool_binding WHERE provider_id = $1 AND removed_at IS NULL', [providerId])).map((r) => r.tool_id);
  },
};
