import { type EntityManager } from 'typeorm';
import { returnedRows } from '@tollgate/persistence';

type Executor = Pick<EntityManager, 'query'>;

/** An admin's review statements on `discovery.catalog_tool` and `discovery.tool_version`. */
export const ToolReviews = {
  /** The tool's version in force, its row locked for the review; undefined when there is no such tool. */
  async lockTool(m: Executor, toolId: string): Promise<{ current_version: number } | undefined> {
    const rows = (await m.query('SELECT current_version FROM discovery.catalog_tool WHERE tool_id = $1 FOR UPDATE', [toolId])) as { current_version: number }[];
    return rows[0];
  },

  async versionState(m: Executor, toolId: string, version: number): Promise<string | undefined> {
    const rows = (await m.query('SELECT state FROM discovery.tool_version WHERE tool_id = $1 AND version = $2', [toolId, version])) as { state: string }[];
    return rows[0]?.state;
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
    const rows = returnedRows(await m.query(
      `UPDATE discovery.catalog_tool SET overrides = overrides || $2::jsonb,
         reviewed_at = CASE WHEN $3::boolean IS NULL THEN reviewed_at WHEN $3 THEN now() ELSE NULL END
       WHERE tool_id = $1 RETURNING tool_id`,
      [toolId, JSON.stringify(overrides), reviewed]));
    return rows.length > 0;
  },
};
