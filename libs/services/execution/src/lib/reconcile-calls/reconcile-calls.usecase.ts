import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';
import { awaitingVerdict } from '@tollgate/call-life';
import { feedResult } from '@tollgate/messaging';
import { type Resolution } from '../dispatch-call/dispatch';
import { DispatchWorkflow } from '../dispatch-call/dispatch.workflow';
import { PendingCalls } from '../dispatch-call/pending-calls.repository';
import { EXECUTION } from '../execution.constants';
import { Reconciliations } from '../dispatch-call/reconciliations.repository';

export { type Resolution } from '../dispatch-call/dispatch';

export { DEFAULT_STALL_GRACE_MS, STALL_SWEEP_BATCH } from '../dispatch-call/reconciliations.repository';

/**
 * B5, C6: every call whose outcome is unknown ends in exactly one terminal state. The reconciler's rounds are the
 * dispatch workflow's due work (`DispatchWorkflow.decideDue`: interrupted attempts reported as stalled, each call owed
 * a verdict tried by its operation key, `ReadBackCases`); this is the operator's side: the open and resolved cases, and
 * an operator's decision, fed back through the runner the same way — never a new dispatch.
 */
@Injectable()
export class ReconcileCallsUseCase {
  constructor(
    @InjectDataSource(EXECUTION) private readonly dataSource: DataSource,
    private readonly workflow: DispatchWorkflow,
  ) {}

  /** An operator's (or the reconciler's) decision, recorded once with who, when and why: `not_open` when no verdict is owed. */
  async resolve(intentId: string, r: Resolution): Promise<'resolved' | 'not_open'> {
    const life = await PendingCalls.lifeOf(this.dataSource, intentId);
    const attempt = life && awaitingVerdict(life);
    if (attempt === undefined) return 'not_open';
    const emitted = await feedResult(this.workflow, { type: 'verdict', intentId, attempt, resolution: r });
    return emitted.length > 0 ? 'resolved' : 'not_open';
  }

  list(state: 'open' | 'resolved' | 'all') {
    return Reconciliations.list(this.dataSource, state);
  }
}
