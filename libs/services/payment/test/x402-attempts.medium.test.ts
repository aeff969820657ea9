/**
 * Medium tier (real PostgreSQL with payment's migrations): an x402 attempt ends once (P4, B3). Two steps that both
 * reach the end of one attempt — a lease that ran out while the first was still waiting for the facilitator — feed
 * their `Settled` back at once, each in its own transaction, as the runner does (`applyResult` → `decideAttempt`): the
 * attempt's row lock and the model's "already ended" let exactly one through, so the payer's money is credited and
 * held once. And a payment's nonce is spent once: a call that decided on it unused and finds it spent by another call
 * when it writes has lost a race, which the consumer retries (then refusing it), never a second attempt.
 */
import { randomUUID } from 'node:crypto';
import { type DataSource } from 'typeorm';
import { accountKey } from '@tollgate/accounting';
import { type CallRequestedPayload } from '@tollgate/contracts';
import { initialState } from '@tollgate/call-life';
import { applyResult, failureKind, LostRace, OutboxWriter } from '@tollgate/messaging';
import { balanceOf, openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase } from '@tollgate/testing';
import { MppPayments } from '../src/lib/mpp/mpp-payments';
import { paymentDataSourceOptions } from '../src/lib/payment.datasource-options';
import { DEFAULT_VELOCITY, DEFAULT_X402, type PaymentOptions } from '../src/lib/payment.options';
import { type AttemptResult, AttemptSteps } from '../src/lib/place-hold/attempt-steps';
import { MppSteps } from '../src/lib/mpp/mpp-steps';
import { HoldReads } from '../src/lib/place-hold/hold-reads';
import { PaymentStore } from '../src/lib/place-hold/payment-store';
import { PlaceHoldWorkflow } from '../src/lib/place-hold/place-hold.workflow';
import { X402Attempts } from '../src/lib/attempts/x402-attempts.repository';
import { X402Payments } from '../src/lib/attempts/x402-payments';

jest.setTimeout(60_000);

describe('an x402 attempt ends once (medium tier)', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;
  let place: PlaceHoldWorkflow;

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_pay_x402_medium');
    ds = await openServiceDataSource(paymentDataSourceOptions(db.url));
    const outbox = new OutboxWriter('payment', 'payment');
    const options = { velocity: DEFAULT_VELOCITY, x402: DEFAULT_X402, x402Facilitator: { kind: 'off' } } as PaymentOptions;
    const [payments, mpp] = [new X402Payments(options, null), new MppPayments(options)];
    place = new PlaceHoldWorkflow(outbox, ds, new HoldReads(options, null, payments, mpp), new AttemptSteps(options, null, null, payments, new MppSteps(mpp)));
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  it('two workers settling one attempt at once: one applies, the hold is placed and the wallet credited once', async () => {
    const ownerId = `owner-${randomUUID()}`;
    const request: CallRequestedPayload = {
      intentId: randomUUID(), ownerId, agentId: `agent-${randomUUID()}`, mcpUrlId: 'url-1', toolId: 'tool-1', toolName: 'reverse_text', contractVersion: 1,
      arguments: {}, argumentsHash: 'a'.repeat(64), price: { amountMinor: '25', asset: 'USDC' }, deadlineAt: new Date(Date.now() + 60_000).toISOString(),
    };
    const nonce = `0x${randomUUID().replace(/-/g, '')}`;
    await ds.transaction((m) => X402Attempts.record(m, {
      intent_id: request.intentId, network: 'eip155:84532', payer: '0xpayer', nonce, amount_minor: '25', asset: 'USDC', facilitator: 'http://facilitator',
      payment_id: `pay_${randomUUID()}`, payment: {} as never, requirements: {} as never, request, causation_id: randomUUID(), approved: false,
    }));
    const step = (event: AttemptResult['event']) => ds.transaction((m) => applyResult(place, m, {
      kind: 'attempt', intentId: request.intentId, event, retryInMs: 0, depositId: randomUUID(), holdId: randomUUID(), at: new Date(),
    }));
    await step({ type: 'Verified', payer: '0xpayer' });
    // Each step's result as the runner feeds it back: decided over the attempt and the wallet, locked.
    const settle = async () => ((await step({ type: 'Settled', transaction: '0xtx' })).emit ?? []).length > 0;
    const applied = await Promise.all([settle(), settle()]);
    expect(applied.filter(Boolean)).toHaveLength(1);
    expect(await balanceOf(ds.manager, 'payment', accountKey({ kind: 'held', ownerId }), 'USDC')).toBe(25n);
    expect(Number((await ds.query('SELECT count(*)::int AS n FROM payment.hold WHERE intent_id = $1', [request.intentId]))[0].n)).toBe(1);
    expect(await ds.query(`SELECT source, amount_minor FROM payment.deposit WHERE reference = $1`, [`x402:eip155:84532:${nonce}`])).toEqual([{ source: 'x402', amount_minor: '25' }]);
    expect(await ds.query(`SELECT life->>'step' AS step, open FROM payment.x402_attempt WHERE intent_id = $1`, [request.intentId])).toEqual([{ step: 'settled', open: false }]);
  });

  it('a nonce another call spent between the read and the write is a race lost (40001: retried), never a second attempt', async () => {
    const request = (intentId: string): CallRequestedPayload => ({
      intentId, ownerId: `owner-${randomUUID()}`, agentId: `agent-${randomUUID()}`, mcpUrlId: 'url-1', toolId: 'tool-1', toolName: 'reverse_text', contractVersion: 1,
      arguments: {}, argumentsHash: 'b'.repeat(64), price: { amountMinor: '25', asset: 'USDC' }, deadlineAt: new Date(Date.now() + 60_000).toISOString(),
    });
    const nonce = `0x${randomUUID().replace(/-/g, '')}`;
    const attempt = (r: CallRequestedPayload) => ({
      intent_id: r.intentId, network: 'eip155:84532', payer: '0xpayer', nonce, amount_minor: '25', asset: 'USDC', facilitator: 'http://facilitator',
      payment_id: `pay_${randomUUID()}`, payment: {} as never, requirements: {} as never, request: r, causation_id: randomUUID(), approved: false,
    });
    const [first, second] = [request(randomUUID()), request(randomUUID())];
    // Both decided while the nonce was unused; the first commits, the second's write finds it spent.
    const paying = (r: CallRequestedPayload) => ({ intentId: r.intentId, before: undefined, life: initialState(r.intentId), inputs: [], extra: { paying: { attempt: attempt(r) } } });
    await ds.transaction((m) => PaymentStore.save(m, [paying(first)]));
    const lost = await ds.transaction((m) => PaymentStore.save(m, [paying(second)])).catch((e: unknown) => e);
    expect(lost).toBeInstanceOf(LostRace);
    expect(failureKind(lost)).toBe('transient');
    expect(await ds.query('SELECT intent_id FROM payment.x402_attempt WHERE nonce = $1', [nonce])).toEqual([{ intent_id: first.intentId }]);
  });
});
