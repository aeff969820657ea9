/**
 * Medium tier (real PostgreSQL with the gateway's migrations; no Kafka, no HTTP): the gateway's part of a call's life.
 * Lives generated from the call-life route are recorded (the call row as call_tool writes it), their other events
 * delivered in random batches, in any order and with duplicates, through the gateway's OutcomeWorkflow and the workflow runner; the stored state must
 * be the model's fold of the whole life, the derived columns must say what the model says, and the agent's answer
 * must follow from the state (B4, B5, G5.3, C8).
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { type DataSource } from 'typeorm';
import { attemptCount, type CallEvent, callEvent, evolve, failureOf, foldCall, initialState, isAnswered, repeatVerdict, status } from '@tollgate/call-life';
import { arbitraryDelivery, arbitraryLife, type GeneratedLife, lifeOf } from '@tollgate/call-life/testing';
import { openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase, overlappingTransactions } from '@tollgate/testing';
import { Calls } from '../src/lib/calls/calls.repository';
import { answerOf } from '../src/lib/call-tool/call-answer';
import { gatewayDataSourceOptions } from '../src/lib/gateway.datasource-options';
import { applyCallInputs, callInputs } from '@tollgate/messaging';
import { type CallWaiters } from '../src/lib/call-tool/call-waiters.service';
import { OutcomeWorkflow } from '../src/lib/record-outcome/outcome.workflow';

jest.setTimeout(120_000);

describe('the gateway folds a call\'s events with the call-life model (medium tier)', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;
  let workflow: OutcomeWorkflow;
  /** The runner's step in a transaction: the calls it decided to wake (the calls that became answered). */
  const record = { execute: (m: Parameters<typeof applyCallInputs>[1], events: readonly CallEvent[]) => applyCallInputs(workflow, m, callInputs(events)) };

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_gw_medium');
    ds = await openServiceDataSource(gatewayDataSourceOptions(db.url));
    // The waiters are woken after commit by the consumer; here the decided wake-ups are what is checked.
    workflow = new OutcomeWorkflow({ notify: () => undefined } as unknown as CallWaiters);
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  const requestOf = (life: GeneratedLife) => life.events.find((e) => e.type === 'CallRequested')!;
  const insert = async (life: GeneratedLife) => {
    const request = requestOf(life);
    if (request.type !== 'CallRequested') throw new Error('not a request');
    const p = request.payload;
    await Calls.insert(ds.manager, {
      intent_id: life.intentId, agent_id: randomUUID(), mcp_url_id: randomUUID(), tool_id: p.toolId, price_minor: p.price.amountMinor, asset: p.price.asset,
      asset_decimals: 6, access_policy: null, operation_key: p.operationKey ?? null, deadline_at: new Date(p.deadlineAt), life: evolve(initialState(life.intentId), request),
    });
  };
  const deliver = async (events: readonly CallEvent[], batch: number) => {
    for (let i = 0; i < events.length; i += batch) await ds.transaction((m) => record.execute(m, events.slice(i, i + batch)));
  };

  it('any order, duplication and batching of a life\'s events stores the model\'s state, columns and answer', async () => {
    const cases = fc.sample(arbitraryLife().chain((life) => fc.tuple(fc.constant(life), arbitraryDelivery(life), fc.integer({ min: 1, max: 4 }))), 40);
    for (const [life, delivered, batch] of cases) {
      await insert(life);
      await deliver(delivered.filter((e) => e.type !== 'CallRequested'), batch);
      const stored = (await Calls.find(ds, life.intentId))!;
      const expected = foldCall(life.intentId, life.events);
      expect(stored.life).toEqual(expected);
      const [row] = await ds.query('SELECT answered FROM gateway.call WHERE intent_id = $1', [life.intentId]);
      expect({ answered: row.answered, status: status(stored.life), failed: failureOf(stored.life) !== undefined, attempts: attemptCount(stored.life) }).toEqual({
        answered: isAnswered(expected),
        status: life.terminal,
        failed: life.branch !== 'confirmed' && life.branch !== 'unknown_then_confirmed',
        attempts: life.attempts,
      });
      const answer = answerOf(stored);
      const receipt = answer._meta?.['assay/receipt'] as { status: string; charged: { amountMinor: string } } | undefined;
      if (life.branch === 'confirmed' || life.branch === 'unknown_then_confirmed') {
        expect(answer.isError).toBeUndefined();
        expect(answer.content).toEqual([{ type: 'text', text: 'success' }]);
        expect(receipt?.status).toBe('SETTLED');
      } else if (life.branch === 'payment_refused') {
        expect(answer._meta?.['assay/error']).toMatchObject({ code: 'PAYMENT_INSUFFICIENT_FUNDS', retryable: true });
        expect(receipt).toBeUndefined();
      } else {
        expect(answer.isError).toBe(true);
        expect(receipt).toMatchObject({ status: 'REFUNDED', charged: { amountMinor: '0' } });
      }
    }
  });

  it('a later attempt\'s result replaces an earlier one\'s, never the other way round, whatever the order', async () => {
    const life = lifeOf({ intentId: randomUUID(), holdId: randomUUID(), priceMinor: 250, free: false, fallbacks: 2, branch: 'confirmed', final: false });
    await insert(life);
    const rest = life.events.filter((e) => e.type !== 'CallRequested');
    await deliver([...rest].reverse(), 1);
    const answer = answerOf((await Calls.find(ds, life.intentId))!);
    expect(answer.content).toEqual([{ type: 'text', text: 'success' }]);
    expect(answer._meta?.['assay/receipt']).toMatchObject({ attempts: 3, fellBack: true, providerId: 'provider-3', status: 'SETTLED' });
  });

  it('an unknown outcome is answered as being reconciled, then replaced by its verdict', async () => {
    const life = lifeOf({ intentId: randomUUID(), holdId: randomUUID(), priceMinor: 100, free: false, fallbacks: 0, branch: 'unknown_then_confirmed', final: false });
    await insert(life);
    const [, held, dispatched, unknown, ...verdict] = life.events;
    expect(await ds.transaction((m) => record.execute(m, [held!, dispatched!]))).toEqual([]);
    expect(await ds.transaction((m) => record.execute(m, [unknown!]))).toEqual([life.intentId]);
    let stored = (await Calls.find(ds, life.intentId))!;
    expect(status(stored.life)).toBe('outcome_unknown');
    expect(repeatVerdict(stored.life, { createdAt: stored.created_at, answerExpired: false }, Date.now())).toBe('stalled');
    expect(answerOf(stored)._meta?.['assay/error']).toMatchObject({ code: 'IDEMPOTENCY_RESULT_UNAVAILABLE' });
    await deliver(verdict, 2);
    stored = (await Calls.find(ds, life.intentId))!;
    expect(isAnswered(stored.life)).toBe(true);
    expect(repeatVerdict(stored.life, { createdAt: stored.created_at, answerExpired: false }, Date.now())).toBe('replay');
    expect(answerOf(stored).content).toEqual([{ type: 'text', text: 'success' }]);
  });

  it('a batch costs two statements on the call table, however many calls and events it holds', async () => {
    const lives = fc.sample(arbitraryLife(['confirmed']), 10);
    for (const l of lives) await insert(l);
    const events = lives.flatMap((l) => l.events.filter((e) => e.type !== 'CallRequested'));
    const seen: string[] = [];
    await ds.transaction(async (m) => {
      const query = m.query.bind(m);
      m.query = ((sql: string, params?: unknown[]) => {
        seen.push(sql.trim().split(/\s+/)[0]!);
        return query(sql, params);
      }) as typeof m.query;
      expect(new Set(await record.execute(m, events))).toEqual(new Set(lives.map((l) => l.intentId)));
    });
    expect(seen).toEqual(['SELECT', 'UPDATE']);
    for (const l of lives) expect(status((await Calls.find(ds, l.intentId))!.life)).toBe('settled');
  });

  it('a call recorded in the fold\'s own transaction is folded without reading it again; a second fold there reads what the first saved', async () => {
    const life = lifeOf({ intentId: randomUUID(), holdId: randomUUID(), priceMinor: 250, free: false, fallbacks: 0, branch: 'confirmed', final: false });
    const [held, ...rest] = life.events.filter((e) => e.type !== 'CallRequested');
    const seen: string[] = [];
    await ds.transaction(async (m) => {
      const request = requestOf(life);
      if (request.type !== 'CallRequested') throw new Error('not a request');
      const p = request.payload;
      await Calls.insert(m, {
        intent_id: life.intentId, agent_id: randomUUID(), mcp_url_id: randomUUID(), tool_id: p.toolId, price_minor: p.price.amountMinor, asset: p.price.asset,
        asset_decimals: 6, access_policy: null, operation_key: null, deadline_at: new Date(p.deadlineAt), life: evolve(initialState(life.intentId), request),
      });
      const query = m.query.bind(m);
      m.query = ((sql: string, params?: unknown[]) => {
        seen.push(sql.trim().split(/\s+/)[0]!);
        return query(sql, params);
      }) as typeof m.query;
      await record.execute(m, [held!]);
      await record.execute(m, rest);
    });
    // The hold's fold took the inserted state (no read); the next fold read the row the first one saved.
    expect(seen).toEqual(['UPDATE', 'SELECT', 'UPDATE']);
    expect((await Calls.find(ds, life.intentId))!.life).toEqual(foldCall(life.intentId, life.events));
  });

  it('one call\'s events folded by two transactions at once (two consumers): neither fold is lost', async () => {
    const life = lifeOf({ intentId: randomUUID(), holdId: randomUUID(), priceMinor: 250, free: false, fallbacks: 0, branch: 'confirmed', final: false });
    await insert(life);
    const [held, ...rest] = life.events.filter((e) => e.type !== 'CallRequested');
    // The first transaction folds the hold and stays open; the second folds the rest meanwhile, then the first commits.
    await overlappingTransactions(ds, (m) => record.execute(m, [held!]), (m) => record.execute(m, rest));
    expect((await Calls.find(ds, life.intentId))!.life).toEqual(foldCall(life.intentId, life.events));
  });

  it('an event of a call this gateway never recorded changes nothing', async () => {
    const life = lifeOf({ intentId: randomUUID(), holdId: randomUUID(), priceMinor: 1, free: false, fallbacks: 0, branch: 'confirmed', final: false });
    await deliver([callEvent('PaymentHeld', { intentId: life.intentId, holdId: randomUUID(), ownerId: 'o', amount: { amountMinor: '1', asset: 'USDC' } })], 1);
    expect(await Calls.find(ds, life.intentId)).toBeUndefined();
  });
});
