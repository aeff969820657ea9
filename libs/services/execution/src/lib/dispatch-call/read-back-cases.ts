import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { awaitingVerdict, type CallState } from '@tollgate/call-life';
import { type ExecutionResult } from './dispatch';
import { callAuthority, DispatchCallUseCase } from './dispatch-call.usecase';
import { PendingCalls } from './pending-calls.repository';
import { Reconciliations } from './reconciliations.repository';
import { EXECUTION } from '../execution.constants';

/** A call owed a verdict, as the runner's due work claimed it: its state and the request's arguments. */
export interface OpenCall {
  intentId: string;
  life: CallState;
  arguments: Record<string, unknown> | null;
}

/**
 * One reconciliation try, the I/O of the dispatch workflow's due work (a command): the call owed a verdict is looked up
 * at the provider by its operation key through the tool's declared read-back, and what was found is the verdict the
 * runner feeds back. A read-only call had no effect to find: resolved as not delivered (refunded). Where the provider
 * cannot answer, or the tool declares no read-back, the try is noted and the case stays open (for the next try, or an
 * operator through the ops CLI) — never a new dispatch.
 */
@Injectable()
export class ReadBackCases {
  /** Cases whose try runs in this process now (the next claim skips them). */
  readonly running = new Set<string>();

  constructor(
    @InjectDataSource(EXECUTION) private readonly dataSource: DataSource,
    private readonly dispatch: DispatchCallUseCase,
  ) {}

  async run(c: OpenCall): Promise<ExecutionResult | void> {
    this.running.add(c.intentId);
    try {
      return await this.tryCase(c);
    } finally {
      this.running.delete(c.intentId);
    }
  }

  private async tryCase(c: OpenCall): Promise<ExecutionResult | void> {
    const attempt = awaitingVerdict(c.life);
    const request = c.life.request;
    if (attempt === undefined || !request) return;
    const tool = (await PendingCalls.toolsOf(this.dataSource, [request.toolId], 'any')).get(request.toolId);
    const at = new Date().toISOString();
    if (tool?.kind === 'read') {
      await Reconciliations.noteTry(this.dataSource, c.intentId, null);
      return { type: 'verdict', intentId: c.intentId, attempt, resolution: { decision: 'did_not_happen', by: 'reconciler', at, why: 'a read-only call has no effect to find; its result never reached the agent' } };
    }
    const bindingId = c.life.attempts[String(attempt)]?.dispatched?.bindingId;
    const binding = tool?.bindings.find((b) => b.bindingId === bindingId);
    if (!tool?.read_back || !binding) {
      await Reconciliations.noteTry(this.dataSource, c.intentId, 'the tool declares no read-back: an operator decides');
      return;
    }
    const authority = callAuthority({ owner_id: request.ownerId, agent_id: request.agentId, mcp_url_id: request.mcpUrlId ?? null });
    const outcome = await this.dispatch.readBack({ intentId: c.intentId, operationKey: request.operationKey ?? c.intentId, readBack: tool.read_back, authority }, binding);
    await Reconciliations.noteTry(this.dataSource, c.intentId, outcome.status === 'unreachable' ? outcome.detail : null);
    if (outcome.status === 'unreachable') return;
    return {
      type: 'verdict', intentId: c.intentId, attempt, resolution: { decision: outcome.status === 'found' ? 'happened' : 'did_not_happen', by: 'reconciler', at, why: `read back by operation key: ${outcome.status}` },
      readBack: { outcome, providerId: binding.providerId, dispatch: { arguments: c.arguments ?? {}, readBack: tool.read_back } },
    };
  }
}
