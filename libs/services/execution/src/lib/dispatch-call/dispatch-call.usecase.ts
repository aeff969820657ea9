import { Inject, Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource, type EntityManager } from 'typeorm';
import {
  CallDispatched, digestOf, EffectConfirmed, EffectRejected, OutcomeUnknown, ResultReceived, type ToolBindingDto, type UnknownOutcomeReason,
} from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { callUpstreamTool, UpstreamError, type UpstreamTarget } from '@tollgate/mcp-runtime';
import { returnedRows } from '@tollgate/persistence';
import { createLogger } from '@tollgate/observability';
import { EXECUTION, EXECUTION_OUTBOX } from '../execution.constants';
import { checkResult } from './check-result';

interface ReadyCall {
  intent_id: string;
  tool_id: string;
  arguments: Record<string, unknown>;
  operation_key: string | null;
  deadline_at: Date;
  bindings: ToolBindingDto[] | null;
  output_schema: Record<string, unknown> | null;
}

export interface Dispatch {
  intentId: string;
  attempt: number;
  binding: ToolBindingDto;
  arguments: Record<string, unknown>;
  operationKey?: string;
  deadlineAt: Date;
  outputSchema: Record<string, unknown> | null;
}

const logger = createLogger(EXECUTION);

/** Where a binding's provider is reached: from discovery's registry, never from the agent (R1). */
export function upstreamTarget(b: ToolBindingDto): UpstreamTarget {
  return b.transport === 'stdio' ? { transport: 'stdio', command: b.command!, args: b.args ?? [] } : { transport: 'http', endpoint: b.endpoint! };
}

/**
 * Sends a held call to its provider and records the three facts of B4 / C8:
 *   1. CallDispatched — committed BEFORE the request leaves (with the attempt row);
 *   2. ResultReceived, or OutcomeUnknown when no answer came back;
 *   3. EffectConfirmed / EffectRejected — for a read-only tool, the output-contract check.
 *
 * Retries: this layer makes exactly one attempt per dispatch and never
 * re-sends on its own (C7). An unknown outcome is reconciled by operation key,
 * never dispatched again under a new one (reconciliation lands with the
 * execution issue).
 */
@Injectable()
export class DispatchCallUseCase {
  constructor(
    @InjectDataSource(EXECUTION) private readonly dataSource: DataSource,
    @Inject(EXECUTION_OUTBOX) private readonly outbox: OutboxWriter,
  ) {}

  /** Records one half (request or hold) and, once both are there, the dispatch. Runs in the consumer's transaction. */
  async record(
    manager: EntityManager,
    intentId: string,
    half: { request: { toolId: string; arguments: Record<string, unknown>; operationKey?: string; deadlineAt: string } } | { holdId: string },
    causationId: string,
  ): Promise<Dispatch | undefined> {
    await manager.query('INSERT INTO execution.pending_call (intent_id) VALUES ($1) ON CONFLICT DO NOTHING', [intentId]);
    if ('request' in half) {
      const r = half.request;
      await manager.query(
        'UPDATE execution.pending_call SET tool_id = $2, arguments = $3, operation_key = $4, deadline_at = $5, updated_at = now() WHERE intent_id = $1',
        [intentId, r.toolId, JSON.stringify(r.arguments), r.operationKey ?? null, r.deadlineAt],
      );
    } else {
      await manager.query('UPDATE execution.pending_call SET hold_id = $2, updated_at = now() WHERE intent_id = $1', [intentId, half.holdId]);
    }
    const [ready]: ReadyCall[] = await manager.query(
      `SELECT p.intent_id, p.tool_id, p.arguments, p.operation_key, p.deadline_at, t.bindings, t.output_schema
         FROM execution.pending_call p LEFT JOIN execution.tool_binding t ON t.tool_id = p.tool_id AND t.status = 'active'
        WHERE p.intent_id = $1 AND p.tool_id IS NOT NULL AND p.hold_id IS NOT NULL
          AND NOT EXISTS (SELECT 1 FROM execution.dispatch_attempt a WHERE a.intent_id = p.intent_id)
        FOR UPDATE OF p`,
      [intentId],
    );
    if (!ready) return undefined;
    const binding = ready.bindings?.[0];
    if (!binding) {
      await this.outbox.append(manager, EffectRejected, {
        intentId, attempt: 1, code: 'TOOL_NO_ELIGIBLE_BINDING', reason: 'No provider binding is available for this tool.',
      }, { causationId });
      return undefined;
    }
    const dispatch: Dispatch = {
      intentId, attempt: 1, binding, arguments: ready.arguments, deadlineAt: ready.deadline_at, outputSchema: ready.output_schema,
      ...(ready.operation_key ? { operationKey: ready.operation_key } : {}),
    };
    await manager.query(
      `INSERT INTO execution.dispatch_attempt (intent_id, attempt, binding_id, provider_id, status) VALUES ($1, $2, $3, $4, 'dispatched')`,
      [intentId, dispatch.attempt, binding.bindingId, binding.providerId],
    );
    await this.outbox.append(manager, CallDispatched, {
      intentId, attempt: dispatch.attempt, providerId: binding.providerId, bindingId: binding.bindingId,
      upstreamToolName: binding.upstreamToolName, deadlineAt: dispatch.deadlineAt.toISOString(),
      ...(dispatch.operationKey ? { operationKey: dispatch.operationKey } : {}),
    }, { causationId });
    return dispatch;
  }

  /** The upstream I/O, after CallDispatched has committed. */
  async perform(d: Dispatch): Promise<void> {
    let result;
    try {
      result = await callUpstreamTool({
        target: upstreamTarget(d.binding), toolName: d.binding.upstreamToolName, arguments: d.arguments,
        deadlineAt: d.deadlineAt.getTime(), intentId: d.intentId, ...(d.operationKey ? { operationKey: d.operationKey } : {}),
      });
    } catch (error) {
      const reason: UnknownOutcomeReason = error instanceof UpstreamError && error.kind === 'deadline' ? 'deadline_passed' : 'connection_lost';
      logger.warn({ intentId: d.intentId, providerId: d.binding.providerId, reason }, 'outcome unknown after dispatch');
      await this.complete(d, 'outcome_unknown', async (m) => {
        await this.outbox.append(m, OutcomeUnknown, {
          intentId: d.intentId, attempt: d.attempt, providerId: d.binding.providerId, reason,
          detail: error instanceof UpstreamError ? error.message : 'the upstream call failed',
        });
      });
      return;
    }
    const upstream = {
      content: (result.content ?? []) as Record<string, unknown>[],
      ...(result.structuredContent ? { structuredContent: result.structuredContent as Record<string, unknown> } : {}),
      ...(result.isError ? { isError: true } : {}),
    };
    const verdict = checkResult(upstream, d.outputSchema);
    await this.complete(d, 'result_received', async (m) => {
      await this.outbox.append(m, ResultReceived, {
        intentId: d.intentId, attempt: d.attempt, providerId: d.binding.providerId, outcome: verdict.outcome,
        classification: verdict.classification, resultDigest: digestOf(upstream), result: upstream,
      });
      if (verdict.rejection) {
        await this.outbox.append(m, EffectRejected, { intentId: d.intentId, attempt: d.attempt, code: verdict.rejection.code, reason: verdict.rejection.reason });
      } else {
        await this.outbox.append(m, EffectConfirmed, { intentId: d.intentId, attempt: d.attempt, method: 'output_contract' });
      }
    });
  }

  private async complete(d: Dispatch, status: 'result_received' | 'outcome_unknown', write: (m: EntityManager) => Promise<void>): Promise<void> {
    await this.dataSource.transaction(async (m) => {
      const updated = returnedRows(await m.query(
        `UPDATE execution.dispatch_attempt SET status = $3, completed_at = now() WHERE intent_id = $1 AND attempt = $2 AND status = 'dispatched' RETURNING 1`,
        [d.intentId, d.attempt, status],
      ));
      if (updated.length === 1) await write(m);
    });
  }
}
