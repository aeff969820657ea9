import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type CatalogToolChangedPayload } from '@tollgate/contracts';
import { CatalogTools } from './catalog-tools.repository';

export { CATALOG_CHANGED_CHANNEL } from './catalog-tools.repository';

/** The gateway's read model of the catalog (search_tools, get_tool, tools/list and call_tool read it). */
@Injectable()
export class SyncCatalogUseCase {
  execute(manager: EntityManager, t: CatalogToolChangedPayload): Promise<void> {
    return CatalogTools.save(manager, t);
  }
}
