import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type CatalogToolChangedPayload } from '@tollgate/contracts';

/** The gateway's read model of the catalog (search_tools, get_tool and call_tool read it). */
@Injectable()
export class SyncCatalogUseCase {
  async execute(manager: EntityManager, t: CatalogToolChangedPayload): Promise<void> {
    await manager.query(
      `INSERT INTO gateway.catalog_tool (tool_id, name, version, status, description, input_schema, output_schema, annotations, price_minor, asset)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ON CONFLICT (tool_id) DO UPDATE SET name = EXCLUDED.name, version = EXCLUDED.version, status = EXCLUDED.status,
         description = EXCLUDED.description, input_schema = EXCLUDED.input_schema, output_schema = EXCLUDED.output_schema,
         annotations = EXCLUDED.annotations, price_minor = EXCLUDED.price_minor, asset = EXCLUDED.asset
       WHERE gateway.catalog_tool.version <= EXCLUDED.version`,
      [t.toolId, t.name, t.version, t.status, t.description, JSON.stringify(t.inputSchema), t.outputSchema ? JSON.stringify(t.outputSchema) : null,
        t.annotations ? JSON.stringify(t.annotations) : null, t.price.amountMinor, t.price.asset],
    );
  }
}
