/**
 * Medium tier (real PostgreSQL with execution's migrations; no Kafka, no provider): execution records a call's request
 * and hold with the call-life model, in any order, batching and duplication, and records exactly one first dispatch
 * once both are there (B4: CallDispatched committed before anything is sent) — or a rejection when the deadline has
 * passed or no binding is eligible. The provider I/O itself is not started here.
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { type DataSource, type EntityManager } from 'typeorm';
import { attemptStatus, type CallEvent, callEvent, readyToDispatch } from '@tollgate/call-life';
import { applyCallInputs, callInputs, OutboxWriter } from '@tollgate/messaging';
import { openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase, overlappingTransactions } from '@tollgate/testing';
import { DispatchCallUseCase } from '../src/lib/dispatch-call/dispatch-call.usecase';
import { type AttemptCommand } from '../src/lib/dispatch-call/dispatch';
import { DispatchWorkflow } from '../src/lib/dispatch-call/dispatch.workflow';
import { ReadBackCases } from '../src/lib/dispatch-call/read-back-cases';
import { type ExecutionOptions } from '../src/lib/execution.options';
import { executionDataSourceOptions } from '../src/lib/execution.datasource-options';

jest.setTimeout(120_000);

const binding = (providerId: string) => ({
  bindingId: `b-${providerId}`, providerId, transport: 'http', endpoint: `http://127.0.0.1:1/${providerId}`, upstreamToolName: 'reverse', contractHash: 'a'.repeat(64), health: 'healthy',
});

describe('execution dispatches a held call once, with the call-life model (medium tier)', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;
  let workflow: DispatchWorkflow;
  /** The runner's step over these facts (a request carries its arguments beside them): the dispatches decided. */
  const recordAll = (m: EntityManager, delivered: readonly { event: CallEvent; arguments?: Record<string, unknown> }[]) =>
    applyCallInputs(workflow, m, delivered.map((d) => ({ ...callInputs([d.event])[0]!, payload: { ...d.event.payload, ...(d.arguments ? { arguments: d.arguments } : {}) } })))
      .then((commands) => commands as AttemptCommand[]);

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_exec_medium');
    ds = await openServiceDataSource(executionDataSourceOptions(db.url));
    const outbox = new OutboxWriter('execution', 'execution');
    const dispatch = new DispatchCallUseCase(ds, outbox);
    workflow = new DispatchWorkflow(ds, outbox, { reconcileIntervalMs: 1000, stallGraceMs: 0 } as ExecutionOptions, dispatch, new ReadBackCases(ds, dispatch));
    await ds.query(`INSERT INTO execution.tool_binding (tool_id, name, version, status, bindings, kind) VALUES
      ('tool-1', 'reverse_text', 1, 'active', $1, 'read'), ('tool-gone', 'gone', 1, 'active', '[]', 'read')`, [JSON.stringify([binding('p-b'), binding('p-a')])]);
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  const call = (opts: { toolId?: string; deadlineInMs?: number } = {}) => {
    const intentId = randomUUID();
    const requested = callEvent('CallRequested', {
      intentId, ownerId: 'owner-1', agentId: 'agent-1', mcpUrlId: 'url-1', toolId: opts.toolId ?? 'tool-1', price: { amountMinor: '25', asset: 'USDC' },
      deadlineAt: new Date(Date.now() + (opts.deadlineInMs ?? 60_000)).toISOString(),
    });
    const held = callEvent('PaymentHeld', { intentId, holdId: randomUUID(), ownerId: 'owner-1', amount: { amountMinor: '25', asset: 'USDC' } });
    return { intentId, events: [requested, held] };
  };
  const deliver = async (events: readonly CallEvent[], batch: number) => {
    const started = [];
    for (let i = 0; i < events.length; i += batch) {
      started.push(...await ds.transaction((m) => recordAll(m, events.slice(i, i + batch).map((event) => ({
        event, eventId: randomUUID(), ...(event.type === 'CallRequested' ? { arguments: { text: 'hello' } } : {}),
      })))));
    }
    return started;
  };
  const outbox = async (intentId: string) =>
    (await ds.query(`SELECT envelope->>'type' AS type, envelope->'payload' AS p FROM execution.outbox_event WHERE key = $1 ORDER BY id`, [intentId])) as { type: string; p: Record<string, unknown> }[];

  it('request and hold in any order, batching and duplication: one dispatch, to the first eligible binding, with the arguments', async () => {
    const cases = fc.sample(fc.tuple(fc.integer({ min: 1, max: 2 }), fc.boolean(), fc.nat({ max: 3 })), 20);
    for (const [batch, reversed, duplicates] of cases) {
      const c = call();
      const ordered = reversed ? [...c.events].reverse() : c.events;
      const started = await deliver([...ordered, ...ordered.slice(0, duplicates % 3)], batch);
      expect(started.map(({ dispatch: d, attempt }) => ({ intentId: d.intentId, attempt, provider: d.bindings[0]!.providerId, args: d.arguments }))).toEqual([{ intentId: c.intentId, attempt: 1, provider: 'p-a', args: { text: 'hello' } }]);
      expect((await outbox(c.intentId)).map((e) => e.type)).toEqual(['CallDispatched']);
      const [row] = await ds.query('SELECT life, arguments, hold_id IS NOT NULL AS held FROM execution.pending_call WHERE intent_id = $1', [c.intentId]);
      expect({ ready: readyToDispatch(row.life), args: row.arguments, held: row.held }).toEqual({ ready: false, args: { text: 'hello' }, held: true });
      expect({ status: attemptStatus(row.life, 1), provider: row.life.attempts['1']?.dispatched?.providerId }).toEqual({ status: 'dispatched', provider: 'p-a' });
      expect(await ds.query('SELECT in_flight_attempt, reconciling_attempt FROM execution.pending_call WHERE intent_id = $1', [c.intentId])).toEqual([{ in_flight_attempt: 1, reconciling_attempt: null }]);
    }
  });

  it('a call past its deadline before it could be sent is rejected, never dispatched, and stays so', async () => {
    const c = call({ deadlineInMs: -1 });
    expect(await deliver(c.events, 2)).toEqual([]);
    expect(await deliver(c.events, 1)).toEqual([]);
    expect((await outbox(c.intentId)).map((e) => [e.type, e.p['code']])).toEqual([['EffectRejected', 'PROVIDER_SYSTEM_ERROR']]);
  });

  it('a tool with no eligible binding is rejected with TOOL_NO_ELIGIBLE_BINDING', async () => {
    const c = call({ toolId: 'tool-gone' });
    expect(await deliver(c.events, 1)).toEqual([]);
    expect((await outbox(c.intentId)).map((e) => [e.type, e.p['code']])).toEqual([['EffectRejected', 'TOOL_NO_ELIGIBLE_BINDING']]);
  });

  it('request and hold applied at once by two replicas (first one not committed yet): the second evolves the first\'s state, one dispatch', async () => {
    const c = call();
    // The second replica's batch waits for the first's row, then sees its request.
    const [first, second] = await overlappingTransactions(ds, (m) => recordAll(m, [{ event: c.events[0]!, arguments: { text: 'hello' } }]), (m) => recordAll(m, [{ event: c.events[1]! }]));
    expect(first).toEqual([]);
    expect(second.map(({ dispatch: d }) => [d.intentId, d.arguments])).toEqual([[c.intentId, { text: 'hello' }]]);
    expect((await outbox(c.intentId)).map((e) => e.type)).toEqual(['CallDispatched']);
  });

  it('a request without its hold waits: nothing is dispatched', async () => {
    const c = call();
    expect(await deliver([c.events[0]!], 1)).toEqual([]);
    expect(await outbox(c.intentId)).toEqual([]);
  });

  // The agent's tasks/cancel, as CallCancelRequested, in any order with the request and the hold.
  const cancel = (intentId: string) => callEvent('CallCancelRequested', { intentId, agentId: 'agent-1', requestedAt: new Date().toISOString() });

  it('a cancel before dispatch, in any order and batching with the request and hold: rejected CALL_CANCELLED once, never dispatched', async () => {
    // The cancel is delivered no later than the second of request and hold (or in the same batch as it).
    const cases = fc.sample(fc.tuple(fc.integer({ min: 1, max: 3 }), fc.constantFrom(0, 1, 2), fc.boolean()), 12).filter(([batch, at]) => at < 2 || batch === 3);
    for (const [batch, at, reversed] of cases) {
      const c = call();
      const events = reversed ? [...c.events].reverse() : [...c.events];
      events.splice(at, 0, cancel(c.intentId));
      expect(await deliver([...events, cancel(c.intentId)], batch)).toEqual([]);
      expect((await outbox(c.intentId)).map((e) => [e.type, e.p['code']])).toEqual([['EffectRejected', 'CALL_CANCELLED']]);
      expect(await ds.query(`SELECT life->'attempts'->'1'->'dispatched' AS sent FROM execution.pending_call WHERE intent_id = $1`, [c.intentId])).toEqual([{ sent: null }]);
    }
  });

  it('a cancel after the first dispatch changes nothing (the call was sent)', async () => {
    const c = call();
    expect(await deliver(c.events, 2)).toHaveLength(1);
    expect(await deliver([cancel(c.intentId)], 1)).toEqual([]);
    expect((await outbox(c.intentId)).map((e) => e.type)).toEqual(['CallDispatched']);
  });
});
