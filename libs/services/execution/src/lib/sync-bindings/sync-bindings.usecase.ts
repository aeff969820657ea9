import { Injectable } from '@nestjs/common';
import { type EntityManager } from 'typeorm';
import { type CatalogToolChangedPayload } from '@tollgate/contracts';
import { PendingCallsRepository } from '../dispatch-call/pending-calls.repository';

/** Keeps execution's copy of each tool's bindings and output contract current. */
@Injectable()
export class SyncBindingsUseCase {
  private readonly tools = new PendingCallsRepository();

  execute(manager: EntityManager, tool: CatalogToolChangedPayload): Promise<void> {
    return this.tools.saveTool(manager, tool);
  }
}
