import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type CatalogToolChangedPayload } from '@tollgate/contracts';

/** Keeps execution's copy of each tool's bindings and output contract current. */
@Injectable()
export class SyncBindingsUseCase {
  async execute(manager: EntityManager, tool: CatalogToolChangedPayload): Promise<void> {
    await manager.query(
      `INSERT INTO execution.tool_binding (tool_id, name, version, status, bindings, output_schema, annotations, kind, read_back)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
       ON CONFLICT (tool_id) DO UPDATE SET name = EXCLUDED.name, version = EXCLUDED.version, status = EXCLUDED.status,
         bindings = EXCLUDED.bindings, output_schema = EXCLUDED.output_schema, annotations = EXCLUDED.annotations,
         kind = EXCLUDED.kind, read_back = EXCLUDED.read_back`,
      [tool.toolId, tool.name, tool.version, tool.status, JSON.stringify(tool.bindings), tool.outputSchema ? JSON.stringify(tool.outputSchema) : null,
        tool.annotations ? JSON.stringify(tool.annotations) : null, tool.kind, tool.readBack ? JSON.stringify(tool.readBack) : null],
    );
  }
}
