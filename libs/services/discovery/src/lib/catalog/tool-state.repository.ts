import { type EntityManager } from 'typeorm';
import { returnedRows, select } from '@tollgate/persistence';
import { BOUND_PROVIDER, CATALOG_TOOL, TOOL_VERSION, TOOL_VERSION_COLUMNS } from './catalog-tables';

type Executor = Pick<EntityManager, 'query'>;

/** The reads behind a tool's catalog event, and the mark of what was published last. */
export const ToolStates = {
  /** The tool's row, every version, and its live bindings with their providers; undefined when there is no such tool. */
  async load(m: Executor, toolId: string) {
    const [tool] = await select(m, CATALOG_TOOL, ['tool_id', 'name', 'status', 'reviewed_at', 'overrides'],
      'SELECT tool_id, name, status, reviewed_at, overrides FROM discovery.catalog_tool WHERE tool_id = $1', [toolId]);
    if (!tool) return undefined;
    const versions = await select(m, TOOL_VERSION, TOOL_VERSION_COLUMNS, 'SELECT * FROM discovery.tool_version WHERE tool_id = $1 ORDER BY version', [toolId]);
    const bindings = await select(m, BOUND_PROVIDER, ['provider_id', 'upstream_tool_name', 'contract_hash', 'transport', 'endpoint', 'command', 'args', 'health', 'defaults'],
      `SELECT b.provider_id, b.upstream_tool_name, b.contract_hash, p.transport, p.endpoint, p.command, p.args, p.health, p.defaults
         FROM discovery.tool_binding b JOIN discovery.provider p ON p.provider_id = b.provider_id
        WHERE b.tool_id = $1 AND b.removed_at IS NULL ORDER BY b.provider_id`, [toolId]);
    return { tool, versions, bindings };
  },

  /** Records the digest of the event about to be published; false when it is the one published last (nothing changed). */
  async markPublished(m: Executor, toolId: string, digest: string): Promise<boolean> {
    return returnedRows<unknown>(await m.query(
      `UPDATE discovery.catalog_tool SET published_digest = $2, updated_at = now()
        WHERE tool_id = $1 AND published_digest IS DISTINCT FROM $2 RETURNING tool_id`, [toolId, digest])).length > 0;
  },
};
