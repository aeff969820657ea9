import { type EntityManager } from 'typeorm';
import { type CatalogToolChangedPayload } from '@tollgate/contracts';
import { col, defineTable, select } from '@tollgate/persistence';
import { type CatalogToolChangedPayload as CatalogTool } from '@tollgate/contracts';

/** `gateway.catalog_tool`: the gateway's read model of the catalog, one row per tool with its whole document. */
export const CATALOG_TOOL = defineTable('gateway.catalog_tool', {
  tool_id: col.text().required(),
  name: col.text().required(),
  status: col.text().required(),
  version: col.integer().required(),
  doc: col.jsonb<CatalogTool>().required(),
  updated_at: col.timestamptz().required(),
});

/** Every gateway instance listens here and reloads its in-memory search index (NOTIFY is delivered on commit). */
export const CATALOG_CHANGED_CHANNEL = 'gateway_catalog_changed';

/** The statements on `gateway.catalog_tool`. */
export const CatalogTools = {
  /** Every tool's document (an instance's search index is built from them). */
  async all(m: Pick<EntityManager, 'query'>): Promise<CatalogTool[]> {
    return (await select(m, CATALOG_TOOL, ['doc'], 'SELECT doc FROM gateway.catalog_tool')).map((r) => r.doc);
  },

  /** One tool's document by its name (a tool this instance has not loaded into memory yet). */
  async byName(m: Pick<EntityManager, 'query'>, name: string): Promise<CatalogTool | undefined> {
    return (await select(m, CATALOG_TOOL, ['doc'], 'SELECT doc FROM gateway.catalog_tool WHERE name = $1', [name]))[0]?.doc;
  },

  /** A tool as the catalog last announced it, inserted or replaced, and every instance told (on commit) — one statement. */
  async save(m: Pick<EntityManager, 'query'>, t: CatalogToolChangedPayload): Promise<void> {
    await m.query(
      `WITH saved AS (
         INSERT INTO gateway.catalog_tool (tool_id, name, status, version, doc) VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (tool_id) DO UPDATE SET name = EXCLUDED.name, status = EXCLUDED.status, version = EXCLUDED.version, doc = EXCLUDED.doc, updated_at = now()
         RETURNING tool_id)
       SELECT pg_notify($6, tool_id) FROM saved`,
      [t.toolId, t.name, t.status, t.version, JSON.stringify(t), CATALOG_CHANGED_CHANNEL],
    );
  },
};
