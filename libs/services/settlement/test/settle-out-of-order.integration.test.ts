/**
 * Issue 12 point 6: settlement pays the provider of the attempt whose effect was confirmed, whatever order the call's
 * events arrive in. A call falls back from provider A (attempt 1) to provider B (attempt 2); EffectConfirmed(attempt 2)
 * overtakes CallDispatched(attempt 2). Before, the window closed with A — the wrong provider — paid. Real PostgreSQL,
 * the service's own migrations and use cases.
 */
import { randomUUID } from 'node:crypto';
import { type DataSource } from 'typeorm';
import { OutboxWriter } from '@tollgate/messaging';
import { openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase } from '@tollgate/testing';
import { CloseVerificationUseCase } from '../src/lib/close-verification/close-verification.usecase';
import { type CallFact, RecordCallFactUseCase } from '../src/lib/record-call-fact/record-call-fact.usecase';
import { settlementDataSourceOptions } from '../src/lib/settlement.datasource-options';
import { type SettlementOptions } from '../src/lib/settlement.options';

jest.setTimeout(60_000);

describe('settlement pays the provider of the confirmed attempt (issue 12)', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;
  let record: RecordCallFactUseCase;
  let close: CloseVerificationUseCase;

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_settle');
    ds = await openServiceDataSource(settlementDataSourceOptions(db.url));
    const options: SettlementOptions = { databaseUrl: db.url, outboxPollIntervalMs: 1000, verificationWindowMs: 0, sweepIntervalMs: 100, feeBps: 1000 };
    const outbox = new OutboxWriter('settlement', 'settlement');
    record = new RecordCallFactUseCase(outbox, options);
    close = new CloseVerificationUseCase(ds, outbox, options);
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  const deliver = (intentId: string, facts: CallFact[]) => ds.transaction(async (m) => {
    for (const f of facts) await record.execute(m, intentId, f, randomUUID());
  });
  const settledWith = async (intentId: string) => {
    await close.execute();
    const [row] = await ds.query(`SELECT envelope->'payload'->>'providerId' AS provider FROM settlement.outbox_event WHERE topic = 'settlement.call.settled.v1' AND key = $1`, [intentId]);
    const [payable] = await ds.query(`SELECT account FROM settlement.entry e JOIN settlement.posting p USING (posting_id) WHERE p.intent_id = $1 AND account LIKE 'provider:%'`, [intentId]);
    return { provider: row?.provider, payable: payable?.account };
  };
  const held: CallFact = { kind: 'held', holdId: randomUUID(), ownerId: 'owner-1', amountMinor: '1000', asset: 'USDC' };

  it('EffectConfirmed(attempt 2, B) before CallDispatched(attempt 2): B is paid', async () => {
    const intentId = randomUUID();
    await deliver(intentId, [{ ...held, holdId: randomUUID() }, { kind: 'dispatched', providerId: 'provider-a' }, { kind: 'confirmed', providerId: 'provider-b' }]);
    expect(await settledWith(intentId)).toEqual({ provider: 'provider-b', payable: 'provider:provider-b:payable' });
    // The late CallDispatched(attempt 2) changes nothing.
    await deliver(intentId, [{ kind: 'dispatched', providerId: 'provider-b' }]);
    const [v] = await ds.query('SELECT provider_id FROM settlement.verification WHERE intent_id = $1', [intentId]);
    expect(v.provider_id).toBe('provider-b');
  });

  it('every delivery order of the same facts pays B', async () => {
    const facts: CallFact[] = [{ kind: 'dispatched', providerId: 'provider-a' }, { kind: 'dispatched', providerId: 'provider-b' }, { kind: 'confirmed', providerId: 'provider-b' }];
    const orders = [[0, 1, 2], [0, 2, 1], [2, 0, 1], [1, 2, 0], [2, 1, 0], [1, 0, 2]];
    for (const order of orders) {
      const intentId = randomUUID();
      await deliver(intentId, [{ ...held, holdId: randomUUID() }, ...order.map((i) => facts[i]!)]);
      expect({ order, ...(await settledWith(intentId)) }).toEqual({ order, provider: 'provider-b', payable: 'provider:provider-b:payable' });
    }
  });
});
