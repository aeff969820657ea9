/**
 * Medium tier (real PostgreSQL with execution's migrations): what an attempt's I/O found is fed back to the dispatch
 * workflow through the runner and decided under the call's lock (B4, C7, B5). A provider the call cannot be sent to
 * (a real upstream call to port 1, refused before anything is performed) makes the runner dispatch the next binding in the same
 * transaction as the failed result, then reject the call; a second report of an attempt changes nothing; an attempt
 * interrupted mid-call becomes an unknown outcome whose reconciliation is the model's `awaitingVerdict`, closed once
 * by a verdict. There is no attempt table: the words come from the call's state.
 */
import { randomUUID } from 'node:crypto';
import { type DataSource } from 'typeorm';
import { attemptStatus, callEvent } from '@tollgate/call-life';
import { applyCallInputs, callInputs, drainCommands, feedResult, OutboxWriter, runCommand, runDueWork } from '@tollgate/messaging';
import { openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase } from '@tollgate/testing';
import { type AttemptCommand } from '../src/lib/dispatch-call/dispatch';
import { DispatchCallUseCase } from '../src/lib/dispatch-call/dispatch-call.usecase';
import { DispatchWorkflow } from '../src/lib/dispatch-call/dispatch.workflow';
import { ReadBackCases } from '../src/lib/dispatch-call/read-back-cases';
import { type ExecutionOptions } from '../src/lib/execution.options';
import { executionDataSourceOptions } from '../src/lib/execution.datasource-options';
import { Reconciliations } from '../src/lib/dispatch-call/reconciliations.repository';

jest.setTimeout(120_000);

const refusing = (providerId: string) => ({
  bindingId: `b-${providerId}`, providerId, transport: 'http', endpoint: `http://127.0.0.1:1/${providerId}`, upstreamToolName: 'reverse', contractHash: 'a'.repeat(64), health: 'healthy',
});

describe('execution decides on what its commands found, through the workflow runner (medium tier)', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;
  let workflow: DispatchWorkflow;

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_exec_results');
    ds = await openServiceDataSource(executionDataSourceOptions(db.url));
    const outbox = new OutboxWriter('execution', 'execution');
    const dispatch = new DispatchCallUseCase(ds, outbox);
    workflow = new DispatchWorkflow(ds, outbox, { reconcileIntervalMs: 1000, stallGraceMs: 0 } as ExecutionOptions, dispatch, new ReadBackCases(ds, dispatch));
    await ds.query(`INSERT INTO execution.tool_binding (tool_id, name, version, status, bindings, kind) VALUES ('tool-r', 'lookup', 1, 'active', $1, 'read')`,
      [JSON.stringify([refusing('p-b'), refusing('p-a')])]);
    await ds.query(`INSERT INTO execution.tool_binding (tool_id, name, version, status, bindings, kind) VALUES ('tool-s', 'summarise', 1, 'active', $1, 'read')`,
      [JSON.stringify([refusing('p-s')])]);
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  /** A held call, dispatched: the first attempt's command (not run). */
  const dispatched = async (toolId = 'tool-r'): Promise<AttemptCommand> => {
    const intentId = randomUUID();
    const events = [
      callEvent('CallRequested', { intentId, ownerId: 'o', agentId: 'a', mcpUrlId: 'u', toolId, price: { amountMinor: '25', asset: 'USDC' }, deadlineAt: new Date(Date.now() + 60_000).toISOString() }),
      callEvent('PaymentHeld', { intentId, holdId: randomUUID(), ownerId: 'o', amount: { amountMinor: '25', asset: 'USDC' } }),
    ];
    const [command] = await ds.transaction((m) => applyCallInputs(workflow, m, callInputs(events)));
    return command as AttemptCommand;
  };
  const facts = async (intentId: string) =>
    ((await ds.query(`SELECT envelope->>'type' AS type, envelope->'payload' AS p FROM execution.outbox_event WHERE key = $1 ORDER BY id`, [intentId])) as { type: string; p: Record<string, unknown> }[])
      .map((e) => [e.type, e.p['attempt'], e.p['code'] ?? e.p['classification'] ?? e.p['providerId']]);
  const row = async (intentId: string) => (await ds.query('SELECT life, in_flight_attempt, reconciling_attempt FROM execution.pending_call WHERE intent_id = $1', [intentId]))[0];

  it('C7: a provider the call could not be sent to performed nothing — the next binding is dispatched with that result, then the call is rejected; no attempt is left in flight', async () => {
    const c = await dispatched();
    await runCommand(workflow, c);
    await drainCommands();
    expect(await facts(c.dispatch.intentId)).toEqual([
      ['CallDispatched', 1, 'p-a'], ['ResultReceived', 1, 'not_sent'], ['CallDispatched', 2, 'p-b'], ['ResultReceived', 2, 'not_sent'], ['EffectRejected', 2, 'TOOL_ALL_BINDINGS_FAILED'],
    ]);
    const r = await row(c.dispatch.intentId);
    expect([attemptStatus(r.life, 1), attemptStatus(r.life, 2), r.in_flight_attempt, r.reconciling_attempt]).toEqual(['failed', 'failed', null, null]);
  });

  it('a provider that needs a client capability the gateway never offers (-32021) performed nothing: rejected as its own refusal, naming the capabilities', async () => {
    const c = await dispatched('tool-s');
    const outcome = { kind: 'failed' as const, failure: 'capability', detail: 'the provider needs client capabilities the gateway does not offer (sampling)', requiredCapabilities: { sampling: {} } };
    const emitted = await feedResult(workflow, { type: 'attempt', intentId: c.dispatch.intentId, ...c, outcome });
    expect(emitted.map((e) => e.type)).toEqual(['ResultReceived', 'EffectRejected']);
    expect(emitted[1]!.payload).toMatchObject({ attempt: 1, code: 'PROVIDER_REQUEST_ERROR', requiredCapabilities: { sampling: {} } });
    expect((emitted[1]!.payload as { reason: string }).reason).toMatch(/client capabilities the gateway does not offer \(sampling\); nothing was performed/);
    const r = await row(c.dispatch.intentId);
    expect([attemptStatus(r.life, 1), r.life.attempts['1'].rejected.requiredCapabilities, r.in_flight_attempt]).toEqual(['failed', { sampling: {} }, null]);
  });

  it('an attempt reported twice (a worker and the stall sweep, or a redelivery): the second report emits nothing', async () => {
    const c = await dispatched();
    const report = { type: 'attempt' as const, intentId: c.dispatch.intentId, ...c, outcome: { kind: 'unknown' as const, reason: 'connection_lost' as const, detail: 'reset' } };
    expect((await feedResult(workflow, report)).map((e) => e.type)).toEqual(['OutcomeUnknown']);
    expect(await feedResult(workflow, report)).toEqual([]);
    expect(await feedResult(workflow, { type: 'stalled', intentId: c.dispatch.intentId, attempt: 1 })).toEqual([]);
  });

  it('B5: the reconciler\'s round is the runner\'s due work — an attempt stalled past its deadline is reported once, none in flight here', async () => {
    const c = await dispatched();
    const intentId = c.dispatch.intentId;
    await ds.query(`UPDATE execution.pending_call SET deadline_at = now() - interval '1 minute' WHERE intent_id = $1`, [intentId]);
    const inFlight = (workflow as unknown as { dispatch: DispatchCallUseCase }).dispatch.inFlight;
    inFlight.add(intentId);
    await runDueWork(workflow);
    expect((await facts(intentId)).map(([type]) => type)).toEqual(['CallDispatched']);
    inFlight.delete(intentId);
    await runDueWork(workflow);
    await runDueWork(workflow);
    expect((await facts(intentId)).map(([type]) => type)).toEqual(['CallDispatched', 'OutcomeUnknown']);
    expect(await row(intentId)).toMatchObject({ in_flight_attempt: null, reconciling_attempt: 1 });
    // A read-only tool's case is tried on a later round: nothing to find, so not delivered (refunded).
    await ds.query(`UPDATE execution.pending_call SET updated_at = now() - interval '1 minute' WHERE intent_id = $1`, [intentId]);
    await runDueWork(workflow);
    await drainCommands();
    expect((await facts(intentId)).map(([type]) => type)).toEqual(['CallDispatched', 'OutcomeUnknown', 'EffectRejected']);
    expect((await Reconciliations.list(ds, 'resolved')).filter((r) => r['intentId'] === intentId)).toEqual([expect.objectContaining({ status: 'resolved', resolution: expect.objectContaining({ by: 'reconciler' }) })]);
  });

  it('B5: an interrupted attempt becomes an unknown outcome; its reconciliation is open until one verdict, recorded with who decided', async () => {
    const c = await dispatched();
    const intentId = c.dispatch.intentId;
    expect((await row(intentId)).in_flight_attempt).toBe(1);
    expect((await feedResult(workflow, { type: 'stalled', intentId, attempt: 1 })).map((e) => e.type)).toEqual(['OutcomeUnknown']);
    expect(await row(intentId)).toMatchObject({ in_flight_attempt: null, reconciling_attempt: 1 });
    const listed = async (state: 'open' | 'resolved') => (await Reconciliations.list(ds, state)).filter((r) => r['intentId'] === intentId);
    expect(await listed('open')).toEqual([expect.objectContaining({ intentId, attempt: 1, status: 'open', reason: 'execution_interrupted' })]);
    const resolution = { decision: 'did_not_happen' as const, by: 'ops@example.com', at: new Date().toISOString(), why: 'the provider has no record' };
    expect((await feedResult(workflow, { type: 'verdict', intentId, attempt: 1, resolution })).map((e) => e.type)).toEqual(['EffectRejected']);
    expect(await feedResult(workflow, { type: 'verdict', intentId, attempt: 1, resolution: { ...resolution, decision: 'happened' } })).toEqual([]);
    expect(await listed('open')).toEqual([]);
    expect(await listed('resolved')).toEqual([expect.objectContaining({ intentId, status: 'resolved', resolution })]);
    expect((await facts(intentId)).map(([type]) => type)).toEqual(['CallDispatched', 'OutcomeUnknown', 'EffectRejected']);
  });
});
