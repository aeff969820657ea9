import { type EntityManager } from 'typeorm';
import { returnedRows, select } from '@tollgate/persistence';
import { CATALOG_TOOL, TOOL_VERSION } from '../catalog/catalog-tables';

type Executor = Pick<EntityManager, 'query'>;

/** An admin's review statements on `discovery.catalog_tool` and `discovery.tool_version`. */
export const ToolReviews = {
  /** The tool's version in force, its row locked for the review; undefined when there is no such tool. */
  async lockTool(m: Executor, toolId: string): Promise<{ current_version: number } | undefined> {
    return (await select(m, CATALOG_TOOL, ['current_version'], 'SELECT current_version FROM discovery.catalog_tool WHERE tool_id = $1 FOR UPDATE', [toolId]))[0];
  },

  async versionState(m: Executor, toolId: string, version: number): Promise<string | undefined> {
    return (await select(m, TOOL_VERSION, ['state'], 'SELECT state FROM discovery.tool_version WHERE tool_id = $1 AND version = $2', [toolId, version]))[0]?.state;
  },

  /**
   * R3: `version` in force, the one it replaces retired, the tool pointing at it. Three statements on purpose: at most
   * one version is approved (`tool_version_one_approved`), and a unique index is checked row by row, so the old one
   * must be retired before the new one is approved.
   */
  async approve(m: Executor, toolId: string, version: number): Promise<void> {
    await m.query(`UPDATE discovery.tool_version SET state = 'retired', decided_at = now() WHERE tool_id = $1 AND state = 'approved'`, [toolId]);
    await m.query(`UPDATE discovery.tool_version SET state = 'approved', decided_at = now(), note = note || ' Approved by an admin.' WHERE tool_id = $1 AND version = $2`, [toolId, version]);
    await m.query('UPDATE discovery.catalog_tool SET current_version = $2 WHERE tool_id = $1', [toolId, version]);
  },

  /** Listing overrides merged into the tool's, and its review mark set or cleared (`reviewed` null: unchanged); false when no such tool. */
  async updateListing(m: Executor, toolId: string, overrides: object, reviewed: boolean | null): Promise<boolean> {
    const rows = returnedRows<unknown>(await m.query(
      `UPDATE discovery.catalog_tool SET overrides = overrides || $2::jsonb,
         reviewed_at = CASE WHEN $3::boolean IS NULL THEN reviewed_at WHEN $3 THEN now() ELSE NULL END
       WHERE tool_id = $1 RETURNING tool_id`,
      [toolId, JSON.stringify(overrides), reviewed]));
    return rows.length > 0;
  },
};
