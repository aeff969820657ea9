import { type EntityManager } from 'typeorm';
import { type CatalogToolChangedPayload } from '@tollgate/contracts';

/** Every gateway instance listens here and reloads its in-memory search index (NOTIFY is delivered on commit). */
export const CATALOG_CHANGED_CHANNEL = 'gateway_catalog_changed';

/** `gateway.catalog_tool`: the gateway's read model of the catalog, one row per tool with its whole document. */
export const CatalogTools = {
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
