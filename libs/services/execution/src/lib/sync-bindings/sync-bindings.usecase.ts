import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type CatalogToolChangedPayload } from '@tollgate/contracts';
import { PendingCalls } from '../dispatch-call/pending-calls.repository';

/** Keeps execution's copy of each tool's bindings and output contract current. */
@Injectable()
export class SyncBindingsUseCase {

  execute(manager: EntityManager, tool: CatalogToolChangedPayload): Promise<void> {
    return PendingCalls.saveTool(manager, tool);
  }
}
