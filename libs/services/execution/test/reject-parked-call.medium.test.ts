/**
 * G (every wait ends with a final answer), medium tier: when execution parks a call's request or hold, the agent is
 * answered with EffectRejected — only while nothing was sent; recorded in the call's state so nothing dispatches
 * later; and sent even when the state cannot be written (the fault the event was parked for). Run by the workflow
 * runner (`answerParked` over `DispatchWorkflow.decideParked`), as the consumer runs it.
 */
import { randomUUID } from 'node:crypto';
import { type DataSource, type EntityManager } from 'typeorm';
import { callEvent } from '@tollgate/call-life';
import { PaymentHeld } from '@tollgate/contracts';
import { answerParked, applyCallInputs, callInputs, OutboxWriter } from '@tollgate/messaging';
import { openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase } from '@tollgate/testing';
import { DispatchCallUseCase } from '../src/lib/dispatch-call/dispatch-call.usecase';
import { DispatchWorkflow } from '../src/lib/dispatch-call/dispatch.workflow';
import { ReadBackCases } from '../src/lib/dispatch-call/read-back-cases';
import { type ExecutionOptions } from '../src/lib/execution.options';
import { executionDataSourceOptions } from '../src/lib/execution.datasource-options';

jest.setTimeout(60_000);

describe('execution answers a call whose event it parked (medium tier)', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;
  let workflow: DispatchWorkflow;
  /** The runner's answer to a parked hold, in the park's transaction. */
  const reject = { execute: (m: EntityManager, p: { intentId: string; causationId?: string }) => answerParked(workflow, PaymentHeld, { manager: m, intentId: p.intentId, eventId: p.causationId, payload: undefined }) };

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_exec_parked');
    ds = await openServiceDataSource(executionDataSourceOptions(db.url));
    const outbox = new OutboxWriter('execution', 'execution');
    const dispatch = new DispatchCallUseCase(ds, outbox);
    workflow = new DispatchWorkflow(ds, outbox, { reconcileIntervalMs: 1000, stallGraceMs: 0 } as ExecutionOptions, dispatch, new ReadBackCases(ds, dispatch));
    await ds.query(`INSERT INTO execution.tool_binding (tool_id, name, version, status, bindings, kind) VALUES ('tool-1', 'reverse_text', 1, 'active', $1, 'read')`,
      [JSON.stringify([{ bindingId: 'b', providerId: 'p', transport: 'http', endpoint: 'http://127.0.0.1:1/p', upstreamToolName: 'reverse', contractHash: 'a'.repeat(64), health: 'healthy' }])]);
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  const events = (intentId: string) => ({
    requested: callEvent('CallRequested', {
      intentId, ownerId: 'o', agentId: 'a', mcpUrlId: 'u', toolId: 'tool-1', price: { amountMinor: '25', asset: 'USDC' }, deadlineAt: new Date(Date.now() + 60_000).toISOString(),
    }),
    held: callEvent('PaymentHeld', { intentId, holdId: randomUUID(), ownerId: 'o', amount: { amountMinor: '25', asset: 'USDC' } }),
  });
  const deliver = (...evs: ReturnType<typeof callEvent>[]) => ds.transaction((m) => applyCallInputs(workflow, m, callInputs(evs)));
  const outbox = async (intentId: string) => ((await ds.query(`SELECT envelope->>'type' AS type, envelope->'payload'->>'code' AS code FROM execution.outbox_event WHERE key = $1 ORDER BY id`, [intentId])) as { type: string; code: string }[]);

  it('a parked hold of a requested call: rejected, recorded, and a late redelivery of the hold dispatches nothing', async () => {
    const intentId = randomUUID();
    const e = events(intentId);
    await deliver(e.requested);
    await ds.transaction((m) => reject.execute(m, { intentId, causationId: randomUUID() }));
    expect(await outbox(intentId)).toEqual([{ type: 'EffectRejected', code: 'INTERNAL_SERVER_ERROR' }]);
    expect(await deliver(e.held)).toEqual([]);
    expect((await outbox(intentId)).map((x) => x.type)).toEqual(['EffectRejected']);
  });

  it('a call already sent is left to its result: no rejection', async () => {
    const intentId = randomUUID();
    const e = events(intentId);
    expect(await deliver(e.requested, e.held)).toHaveLength(1);
    await ds.transaction((m) => reject.execute(m, { intentId }));
    expect((await outbox(intentId)).map((x) => x.type)).toEqual(['CallDispatched']);
  });

  it('the rejection is sent even when the call\'s state cannot be written', async () => {
    const intentId = randomUUID();
    await ds.query(`CREATE FUNCTION execution.test_no_state() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'test: no state'; END $$`);
    await ds.query('CREATE TRIGGER test_no_state BEFORE INSERT OR UPDATE ON execution.pending_call FOR EACH ROW EXECUTE FUNCTION execution.test_no_state()');
    try {
      await ds.transaction((m) => reject.execute(m, { intentId }));
    } finally {
      await ds.query('DROP TRIGGER test_no_state ON execution.pending_call');
    }
    expect(await outbox(intentId)).toEqual([{ type: 'EffectRejected', code: 'INTERNAL_SERVER_ERROR' }]);
  });
});
