import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type CatalogToolChangedPayload } from '@tollgate/contracts';

/** Every gateway instance listens here and reloads its in-memory search index (NOTIFY is delivered on commit). */
export const CATALOG_CHANGED_CHANNEL = 'gateway_catalog_changed';

/** The gateway's read model of the catalog (search_tools, get_tool, tools/list and call_tool read it). */
@Injectable()
export class SyncCatalogUseCase {
  async execute(manager: EntityManager, t: CatalogToolChangedPayload): Promise<void> {
    await manager.query(
      `INSERT INTO gateway.catalog_tool (tool_id, name, status, version, doc) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (tool_id) DO UPDATE SET name = EXCLUDED.name, status = EXCLUDED.status, version = EXCLUDED.version, doc = EXCLUDED.doc, updated_at = now()`,
      [t.toolId, t.name, t.status, t.version, JSON.stringify(t)],
    );
    await manager.query('SELECT pg_notify($1, $2)', [CATALOG_CHANGED_CHANNEL, t.toolId]);
  }
}
