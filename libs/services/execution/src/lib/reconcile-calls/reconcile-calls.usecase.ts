import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { digestOf, EffectConfirmed, EffectRejected, OutcomeUnknown, ResultReceived } from '@tollgate/contracts';
import { type OutboxWriter } from '@tollgate/messaging';
import { createLogger } from '@tollgate/observability';
import { Inject } from '@nestjs/common';
import { callAuthority, DispatchCallUseCase, openReconciliation } from '../dispatch-call/dispatch-call.usecase';
import { EXECUTION, EXECUTION_OPTIONS, EXECUTION_OUTBOX } from '../execution.constants';
import { type ExecutionOptions } from '../execution.options';
import { type OpenCase, Reconciliations } from './reconciliations.repository';

/** A dispatched attempt with no result this long past its deadline was interrupted (the process died mid-call). */
export const DEFAULT_STALL_GRACE_MS = 5_000;

export interface Resolution {
  decision: 'happened' | 'did_not_happen';
  by: string;
  at: string;
  why: string;
}

const logger = createLogger(EXECUTION);

/**
 * B5, C6: every call whose outcome is unknown ends in exactly one terminal
 * state. Interrupted attempts are detected after their deadline; each open
 * case is looked up at the provider by its operation key through the tool's
 * declared read-back. Read-only calls had no effect to find: they are
 * resolved as not delivered (refunded). Where the provider cannot answer, the
 * case stays open for an operator (ops CLI), who records a decision — never a
 * new dispatch.
 */
@Injectable()
export class ReconcileCallsUseCase {
  constructor(
    @InjectDataSource(EXECUTION) private readonly dataSource: DataSource,
    @Inject(EXECUTION_OUTBOX) private readonly outbox: OutboxWriter,
    private readonly dispatch: DispatchCallUseCase,
    @Inject(EXECUTION_OPTIONS) private readonly options: ExecutionOptions,
  ) {}

  /** One round: mark interrupted attempts, then try every open case once. */
  async sweep(): Promise<void> {
    const stalled = await Reconciliations.stalledAttempts(this.dataSource, (this.options.stallGraceMs ?? DEFAULT_STALL_GRACE_MS) / 1000);
    for (const s of stalled) {
      if (this.dispatch.inFlight.has(s.intent_id)) continue;
      logger.warn({ intentId: s.intent_id, attempt: s.attempt }, 'dispatched attempt interrupted: reconciling by operation key');
      await this.dispatch.complete(s.intent_id, s.attempt, 'outcome_unknown', async (m) => {
        await this.outbox.append(m, OutcomeUnknown, {
          intentId: s.intent_id, attempt: s.attempt, providerId: s.provider_id, reason: 'execution_interrupted',
          detail: 'the attempt was dispatched and no result was recorded before its deadline',
        });
        await openReconciliation(m, s.intent_id, s.attempt, 'execution_interrupted');
      });
    }
    const open = await Reconciliations.openCases(this.dataSource, 20);
    for (const c of open) await this.tryCase(c).catch((err) => logger.error({ err, intentId: c.intent_id }, 'reconciliation attempt failed'));
  }

  private async tryCase(c: OpenCase): Promise<void> {
    await Reconciliations.countTry(this.dataSource, c.intent_id);
    if (c.kind === 'read') {
      await this.resolve(c.intent_id, { decision: 'did_not_happen', by: 'reconciler', at: new Date().toISOString(), why: 'a read-only call has no effect to find; its result never reached the agent' });
      return;
    }
    const binding = c.bindings?.find((b) => b.bindingId === c.binding_id);
    if (!c.read_back || !binding) {
      await Reconciliations.noteError(this.dataSource, c.intent_id, 'the tool declares no read-back: an operator decides');
      return;
    }
    const operationKey = c.operation_key ?? c.intent_id;
    const rb = await this.dispatch.readBack({ intentId: c.intent_id, operationKey, readBack: c.read_back, authority: callAuthority(c) }, binding);
    if (rb.status === 'unreachable') {
      await Reconciliations.noteError(this.dataSource, c.intent_id, rb.detail);
      return;
    }
    await this.dataSource.transaction(async (m) => {
      if (!(await Reconciliations.claim(m, c.intent_id, { decision: rb.status === 'found' ? 'happened' : 'did_not_happen', by: 'reconciler', at: new Date().toISOString(), why: `read back by operation key: ${rb.status}` }))) return;
      if (rb.status === 'found' && c.attempt_status !== 'result_received') {
        await this.outbox.append(m, ResultReceived, {
          intentId: c.intent_id, attempt: c.attempt, providerId: binding.providerId, outcome: 'success', classification: 'reconciled', resultDigest: digestOf(rb.result), result: rb.result,
        });
      }
      if (rb.status === 'missing' && c.attempt_status !== 'result_received') {
        await this.outbox.append(m, EffectRejected, { intentId: c.intent_id, attempt: c.attempt, code: 'PROVIDER_SYSTEM_ERROR', reason: 'Reconciled by operation key: the provider has no record of the operation; it did not happen and is not charged.' });
        return;
      }
      await this.dispatch.appendReadBackVerdict(m, { intentId: c.intent_id, arguments: c.arguments, readBack: c.read_back }, c.attempt, binding.providerId, rb, 'reconciliation');
    });
  }

  /** An operator's (or the reconciler's) decision, recorded once with who, when and why. */
  async resolve(intentId: string, r: Resolution): Promise<'resolved' | 'not_open'> {
    return this.dataSource.transaction(async (m) => {
      const c = await Reconciliations.openCaseOf(m, intentId);
      if (!c || !(await Reconciliations.claim(m, intentId, r))) return 'not_open';
      if (r.decision === 'happened') {
        if (c.attempt_status !== 'result_received') {
          const result = { content: [{ type: 'text', text: `Reconciled: the operation happened (recorded by ${r.by}). The provider's own response was lost.` }] };
          await this.outbox.append(m, ResultReceived, {
            intentId, attempt: c.attempt, providerId: c.provider_id, outcome: 'success', classification: 'reconciled_by_operator', resultDigest: digestOf(result), result,
          });
        }
        await this.outbox.append(m, EffectConfirmed, { intentId, attempt: c.attempt, method: 'reconciliation', providerId: c.provider_id });
      } else {
        await this.outbox.append(m, EffectRejected, {
          intentId, attempt: c.attempt, code: 'PROVIDER_SYSTEM_ERROR', reason: `Reconciled: the operation did not happen (recorded by ${r.by}: ${r.why})`.slice(0, 500),
        });
      }
      return 'resolved';
    });
  }

  list(status: 'open' | 'resolved' | 'all') {
    return Reconciliations.list(this.dataSource, status);
  }
}
