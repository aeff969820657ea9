/**
 * Medium tier (real PostgreSQL with settlement's migrations and its workflow, events and due work through the runner; no Kafka, no HTTP): settlement records a
 * call's facts with the call-life model, whatever order and batching they arrive in, refunds a rejected effect once,
 * and pays the provider of the attempt whose effect was confirmed (a fallback from A to B whose
 * EffectConfirmed overtakes CallDispatched(attempt 2) pays B, never A).
 */
import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { type DataSource } from 'typeorm';
import { type CallEvent, callEvent, type CallState, foldCall, status } from '@tollgate/call-life';
import { arbitraryDelivery, arbitraryLife, lifeOf } from '@tollgate/call-life/testing';
import { applyCallInputs, callInputs, OutboxWriter, runDueWork } from '@tollgate/messaging';
import { openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase, overlappingTransactions } from '@tollgate/testing';
import { VerificationWorkflow } from '../src/lib/record-call-fact/verification.workflow';
import { settlementDataSourceOptions } from '../src/lib/settlement.datasource-options';
import { type SettlementOptions } from '../src/lib/settlement.options';

jest.setTimeout(60_000);

const SETTLEMENT_READS = new Set(['PaymentHeld', 'CallDispatched', 'EffectConfirmed', 'EffectRejected']);

describe('settlement on the call-life model (medium tier)', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;
  let workflow: VerificationWorkflow;
  const record = { execute: (m: Parameters<typeof applyCallInputs>[1], events: readonly CallEvent[]) => applyCallInputs(workflow, m, callInputs(events)) };
  /** The runner's due work: the calls whose window closed. */
  const close = { execute: () => runDueWork(workflow) };

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_settle');
    ds = await openServiceDataSource(settlementDataSourceOptions(db.url));
    const options: SettlementOptions = { databaseUrl: db.url, outboxPollIntervalMs: 1000, verificationWindowMs: 0, sweepIntervalMs: 100, feeBps: 1000 };
    const outbox = new OutboxWriter('settlement', 'settlement');
    workflow = new VerificationWorkflow(ds, outbox, options);
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  const deliver = async (events: readonly CallEvent[], batch = events.length) => {
    for (let i = 0; i < events.length; i += batch) {
      await ds.transaction((m) => record.execute(m, events.slice(i, i + batch)));
    }
  };
  const emitted = async (intentId: string, topic: string): Promise<Record<string, unknown>[]> =>
    (await ds.query(`SELECT envelope->'payload' AS p FROM settlement.outbox_event WHERE topic = $1 AND key = $2`, [topic, intentId])).map((r: { p: Record<string, unknown> }) => r.p);
  /** What settlement's half of the capture took out of clearing for the call. */
  const settledGross = async (intentId: string): Promise<string | undefined> =>
    (await ds.query(`SELECT (-e.amount)::text AS g FROM settlement.entry e JOIN settlement.posting p USING (posting_id) WHERE p.intent_id = $1 AND e.account = 'platform:clearing'`, [intentId]))[0]?.g;
  const payableOf = async (intentId: string) =>
    (await ds.query(`SELECT account FROM settlement.entry e JOIN settlement.posting p USING (posting_id) WHERE p.intent_id = $1 AND account LIKE 'provider:%'`, [intentId]))[0]?.account;

  it('any order, duplication and batching of a life: settled once to the confirmed provider, or refunded once', async () => {
    const cases = fc.sample(arbitraryLife(['confirmed', 'rejected', 'unknown_then_confirmed', 'unknown_then_rejected', 'refused_before_dispatch', 'cancelled_before_dispatch'])
      .chain((life) => fc.tuple(fc.constant(life), arbitraryDelivery(life), fc.integer({ min: 1, max: 3 }))), 30);
    for (const [life, delivered, batch] of cases) {
      await deliver(delivered.filter((e) => SETTLEMENT_READS.has(e.type)), batch);
      const [row] = await ds.query('SELECT life FROM settlement.verification WHERE intent_id = $1', [life.intentId]);
      // The facts read, plus the refund settlement decided from them (folded in when emitted).
      const { refunded: _refunded, ...read } = row.life as CallState;
      expect(read).toEqual(foldCall(life.intentId, life.events.filter((e) => SETTLEMENT_READS.has(e.type))));
      while ((await close.execute()) > 0);
      // The row's state is the model's end of the money.
      const [closed] = await ds.query('SELECT life, state, closed_at FROM settlement.verification WHERE intent_id = $1', [life.intentId]);
      expect({ state: closed.state, status: status(closed.life), closed: closed.closed_at !== null }).toEqual({ state: life.terminal, status: life.terminal, closed: true });
      const settled = await emitted(life.intentId, 'settlement.call.settled.v1');
      const refunded = await emitted(life.intentId, 'settlement.call.refunded.v1');
      if (life.terminal === 'settled') {
        expect({ settled: settled.length, refunded: refunded.length, provider: settled[0]?.['providerId'] }).toEqual({ settled: 1, refunded: 0, provider: `provider-${life.attempts}` });
        // The charge the route carries (a metered call's by its usage, never past the hold), and the rest released.
        const routed = life.events.find((e) => e.type === 'CallSettled')!.payload as { amount: unknown };
        expect(settled[0]!['amount']).toEqual(routed.amount);
        expect((await settledGross(life.intentId)) ?? '0').toBe((routed.amount as { amountMinor: string }).amountMinor);
      } else {
        expect({ settled: settled.length, refunded: refunded.length }).toEqual({ settled: 0, refunded: 1 });
        expect(refunded[0]).toMatchObject({ holdId: expect.any(String), reason: expect.stringMatching(/^[A-Z_]+$/) });
      }
    }
  });

  it('EffectConfirmed(attempt 2, B) before CallDispatched(attempt 2), in every order: B is paid', async () => {
    const orders = [[0, 1, 2], [0, 2, 1], [2, 0, 1], [1, 2, 0], [2, 1, 0], [1, 0, 2]];
    for (const order of orders) {
      const intentId = randomUUID();
      const facts = [
        callEvent('CallDispatched', { intentId, attempt: 1, providerId: 'provider-a' }),
        callEvent('CallDispatched', { intentId, attempt: 2, providerId: 'provider-b' }),
        callEvent('EffectConfirmed', { intentId, attempt: 2, method: 'output_contract', providerId: 'provider-b' }),
      ];
      await deliver([callEvent('PaymentHeld', { intentId, holdId: randomUUID(), ownerId: 'owner-1', amount: { amountMinor: '1000', asset: 'USDC' } }), ...order.map((i) => facts[i]!)], 1);
      await close.execute();
      expect({ order, provider: (await emitted(intentId, 'settlement.call.settled.v1'))[0]?.['providerId'], payable: await payableOf(intentId) })
        .toEqual({ order, provider: 'provider-b', payable: 'provider:provider-b:payable' });
    }
  });

  it('a hold and a confirmed effect applied at once by two replicas (first not committed yet): the call is settled, not lost', async () => {
    const life = lifeOf({ intentId: randomUUID(), holdId: randomUUID(), priceMinor: 700, free: false, fallbacks: 0, branch: 'confirmed', final: false });
    const [held, ...rest] = life.events.filter((e) => SETTLEMENT_READS.has(e.type));
    await overlappingTransactions(ds, (m) => record.execute(m, [held!]), (m) => record.execute(m, rest));
    while ((await close.execute()) > 0);
    expect((await emitted(life.intentId, 'settlement.call.settled.v1')).map((p) => p['holdId'])).toEqual([(held!.payload as { holdId: string }).holdId]);
  });

  it('a fact redelivered after the call was refunded refunds nothing more', async () => {
    const life = lifeOf({ intentId: randomUUID(), holdId: randomUUID(), priceMinor: 500, free: false, fallbacks: 0, branch: 'rejected', final: false });
    const mine = life.events.filter((e) => SETTLEMENT_READS.has(e.type));
    await deliver(mine, 1);
    await deliver(mine, 2);
    expect(await emitted(life.intentId, 'settlement.call.refunded.v1')).toHaveLength(1);
  });
});
