/**
 * Medium tier (real PostgreSQL with payment's migrations; no Kafka, no HTTP): payment's two paid-path steps, the hold
 * (PlaceHoldWorkflow, on CallRequested) and its end (HoldEndWorkflow, on CallSettled / CallRefunded), each through the
 * runner's step in a transaction as the consumer runs them — one call per transaction, and several in one batch. What the agent, the owner and finance see follows from the rows and events checked here:
 * P1 (a hold before dispatch), P2 (the guarded debit: never more than the wallet holds), P3 (spend policy, approvals,
 * free calls), B2/B3 (a redelivered event changes nothing), and balanced postings in integer minor units.
 */
import { randomUUID } from 'node:crypto';
import { type DataSource } from 'typeorm';
import { accountKey } from '@tollgate/accounting';
import { callEvent, type CallState, isTerminal } from '@tollgate/call-life';
import { type CallRequestedPayload } from '@tollgate/contracts';
import { CallRequested } from '@tollgate/contracts';
import { answerParked, applyCallInputs, callInputs, OutboxWriter } from '@tollgate/messaging';
import { balanceOf, openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase } from '@tollgate/testing';
import { MppPayments } from '../src/lib/mpp/mpp-payments';
import { FundWalletUseCase } from '../src/lib/fund-wallet/fund-wallet.usecase';
import { paymentDataSourceOptions } from '../src/lib/payment.datasource-options';
import { DEFAULT_VELOCITY, DEFAULT_X402, type PaymentOptions } from '../src/lib/payment.options';
import { AttemptSteps } from '../src/lib/place-hold/attempt-steps';
import { type AttemptsWake } from '../src/lib/attempts/attempts-wake';
import { MppSteps } from '../src/lib/mpp/mpp-steps';
import { HoldReads } from '../src/lib/place-hold/hold-reads';
import { PlaceHoldWorkflow } from '../src/lib/place-hold/place-hold.workflow';
import { HoldEndWorkflow } from '../src/lib/resolve-hold/hold-end.workflow';
import { X402Payments } from '../src/lib/attempts/x402-payments';

jest.setTimeout(120_000);

describe('payment places and resolves holds (medium tier)', () => {
  let db: { url: string; drop(): Promise<void> };
  let ds: DataSource;
  let place: PlaceHoldWorkflow;
  let holdEnds: HoldEndWorkflow;
  /** The collection worker woken after an authorization's capture (none here: no x402 attempt is collected). */
  const collection = { kicks: 0, kick() { this.kicks += 1; } };
  const resolve = { resolve: (m: Parameters<typeof applyCallInputs>[1], end: ReturnType<typeof callEvent>) => applyCallInputs(holdEnds, m, callInputs([end])) };
  let wallets: FundWalletUseCase;

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_pay_hold_medium');
    ds = await openServiceDataSource(paymentDataSourceOptions(db.url));
    const outbox = new OutboxWriter('payment', 'payment');
    const options = { velocity: DEFAULT_VELOCITY, x402: DEFAULT_X402, x402Facilitator: { kind: 'off' } } as PaymentOptions;
    wallets = new FundWalletUseCase(ds, outbox);
    const [payments, mpp] = [new X402Payments(options, null), new MppPayments(options)];
    place = new PlaceHoldWorkflow(outbox, ds, new HoldReads(options, null, payments, mpp), new AttemptSteps(options, null, null, payments, new MppSteps(mpp)));
    holdEnds = new HoldEndWorkflow(outbox, collection as unknown as AttemptsWake);
  });
  afterAll(async () => {
    await ds.destroy();
    await db.drop();
  });

  /** A new owner and agent, with `funded` minor units of USDC in the wallet (no wallet at all when undefined). */
  const newAgent = async (funded?: bigint) => {
    const ids = { ownerId: `owner-${randomUUID()}`, agentId: `agent-${randomUUID()}` };
    if (funded !== undefined) await wallets.deposit(ids.ownerId, `dep-${randomUUID()}`, funded, 'USDC');
    return ids;
  };
  const request = (who: { ownerId: string; agentId: string }, over: Partial<CallRequestedPayload> = {}): CallRequestedPayload => ({
    intentId: randomUUID(), ...who, mcpUrlId: 'url-1', toolId: 'tool-1', toolName: 'reverse_text', contractVersion: 1,
    arguments: { text: 'hello' }, argumentsHash: randomUUID().replace(/-/g, '').padEnd(64, '0'), price: { amountMinor: '25', asset: 'USDC' },
    deadlineAt: new Date(Date.now() + 60_000).toISOString(), ...over,
  });
  /** Requests delivered in one batch (one transaction), as the consumer delivers them. */
  const placeHolds = (...rs: CallRequestedPayload[]) => ds.transaction((m) => applyCallInputs(place, m, callInputs(rs.map((r) => callEvent('CallRequested', r)))));
  const placeHold = (r: CallRequestedPayload) => placeHolds(r);
  const parked = (ctx: { payload?: CallRequestedPayload; intentId: string }) =>
    ds.transaction((m) => answerParked(place, CallRequested, { manager: m, payload: ctx.payload, intentId: ctx.intentId, eventId: randomUUID() }));
  const events = async (intentId: string) =>
    (await ds.query(`SELECT envelope->>'type' AS type, envelope->'payload' AS p FROM payment.outbox_event WHERE key = $1 ORDER BY id`, [intentId])) as { type: string; p: Record<string, unknown> }[];
  const balance = (ownerId: string, kind: 'available' | 'held' | 'debt') => balanceOf(ds.manager, 'payment', accountKey({ kind, ownerId }), 'USDC');
  const holdOf = async (intentId: string) => (await ds.query('SELECT hold_id, open, life, amount_minor, captured_minor FROM payment.hold WHERE intent_id = $1', [intentId]))[0] as
    { hold_id: string; open: boolean; life: CallState; amount_minor: string; captured_minor: string | null } | undefined;
  /** The call's end, as settlement announces it: payment resolves the hold when the model says the call is terminal. */
  const settle = (intentId: string, holdId: string, minor: bigint) => ds.transaction((m) => resolve.resolve(m, callEvent('CallSettled', {
    intentId, holdId, providerId: 'p-1', amount: { amountMinor: minor.toString(), asset: 'USDC' } })));
  const refund = (intentId: string, holdId: string) => ds.transaction((m) => resolve.resolve(m, callEvent('CallRefunded', {
    intentId, holdId, amount: { amountMinor: '25', asset: 'USDC' }, reason: 'effect rejected' })));
  const counters = async (agentId: string) =>
    Object.fromEntries(((await ds.query('SELECT kind, calls, amount FROM payment.spend_counter WHERE agent_id = $1', [agentId])) as { kind: string; calls: number; amount: string }[])
      .map((c) => [c.kind, [Number(c.calls), c.amount]]));
  const unbalanced = async () => Number((await ds.query('SELECT count(*)::int AS n FROM (SELECT posting_id FROM payment.entry GROUP BY posting_id, asset HAVING sum(amount) <> 0) x'))[0].n);

  it('P1/P2: a covered paid call holds its price once — posting, hold, charge, counters, PaymentHeld — and a redelivery changes nothing', async () => {
    const who = await newAgent(100n);
    const r = request(who);
    await placeHold(r);
    await placeHold(r);
    const [held, ...more] = await events(r.intentId);
    expect(more).toEqual([]);
    expect(held).toMatchObject({ type: 'PaymentHeld', p: { intentId: r.intentId, ownerId: who.ownerId, amount: { amountMinor: '25', asset: 'USDC' } } });
    expect(held!.p['free']).toBeUndefined();
    expect(await holdOf(r.intentId)).toMatchObject({ hold_id: held!.p['holdId'], open: true, amount_minor: '25' });
    expect({ available: await balance(who.ownerId, 'available'), held: await balance(who.ownerId, 'held') }).toEqual({ available: 75n, held: 25n });
    expect(await counters(who.agentId)).toEqual({ day: [1, '25'], week: [1, '25'], month: [1, '25'], minute: [1, '25'] });
    expect(await ds.query('SELECT outcome, amount_minor, free FROM payment.charge WHERE intent_id = $1', [r.intentId])).toEqual([{ outcome: 'held', amount_minor: '25', free: false }]);
    expect(await unbalanced()).toBe(0);
  });

  it('P2: a wallet short of the price refuses PAYMENT_INSUFFICIENT_FUNDS with what is available, and leaves no trace', async () => {
    const who = await newAgent(10n);
    const r = request(who);
    await placeHold(r);
    expect(await events(r.intentId)).toEqual([{ type: 'PaymentRejected', p: expect.objectContaining({
      code: 'PAYMENT_INSUFFICIENT_FUNDS', retryable: false, details: { price: { amountMinor: '25', asset: 'USDC' }, available: { amountMinor: '10', asset: 'USDC' } },
    }) }]);
    expect(await holdOf(r.intentId)).toBeUndefined();
    expect({ available: await balance(who.ownerId, 'available'), held: await balance(who.ownerId, 'held') }).toEqual({ available: 10n, held: 0n });
    expect(await counters(who.agentId)).toEqual({});
    expect(await ds.query('SELECT outcome, code FROM payment.charge WHERE intent_id = $1', [r.intentId])).toEqual([{ outcome: 'rejected', code: 'PAYMENT_INSUFFICIENT_FUNDS' }]);
  });

  it('P2: twelve calls of one agent at once on a wallet of 100 at 25 each: exactly four held, eight refused, never overdrawn', async () => {
    const who = await newAgent(100n);
    const rs = Array.from({ length: 12 }, () => request(who));
    await Promise.all(rs.map(placeHold));
    const types = (await Promise.all(rs.map(async (r) => (await events(r.intentId)).map((e) => e.type).join()))).sort();
    expect(types).toEqual([...Array(4).fill('PaymentHeld'), ...Array(8).fill('PaymentRejected')].sort());
    expect({ available: await balance(who.ownerId, 'available'), held: await balance(who.ownerId, 'held') }).toEqual({ available: 0n, held: 100n });
    expect((await counters(who.agentId))['day']).toEqual([4, '100']);
  });

  it('P2: the same twelve calls in one batch: the batch spends from a running balance — four held, eight refused', async () => {
    const who = await newAgent(100n);
    const rs = Array.from({ length: 12 }, () => request(who));
    await placeHolds(...rs);
    const types = await Promise.all(rs.map(async (r) => (await events(r.intentId)).map((e) => e.type).join()));
    expect(types).toEqual([...Array(4).fill('PaymentHeld'), ...Array(8).fill('PaymentRejected')]);
    expect((await events(rs[4]!.intentId))[0]!.p['details']).toMatchObject({ available: { amountMinor: '0', asset: 'USDC' } });
    expect({ available: await balance(who.ownerId, 'available'), held: await balance(who.ownerId, 'held') }).toEqual({ available: 0n, held: 100n });
    expect(await counters(who.agentId)).toEqual({ day: [4, '100'], week: [4, '100'], month: [4, '100'], minute: [4, '100'] });
    expect(await unbalanced()).toBe(0);
  });

  it('P3: in one batch an agent\'s earlier calls count — a spend limit, the free quota, one approval request, one approval used', async () => {
    const limited = await newAgent(100n);
    await ds.query(`INSERT INTO payment.spend_policy (owner_id, agent_id, spend_limit_minor, period) VALUES ($1, $2, 40, 'day')`, [limited.ownerId, limited.agentId]);
    const free = request(limited, { freeCallsPerDay: 1 });
    const [paid, over] = [{ ...free, intentId: randomUUID() }, request(limited)];
    await placeHolds(free, paid, over);
    const outcomes = await Promise.all([free, paid, over].map(async (r) => (await events(r.intentId)).map((e) => [e.type, e.p['free'] ?? e.p['code'] ?? (e.p['amount'] as { amountMinor: string }).amountMinor])));
    expect(outcomes).toEqual([[['PaymentHeld', true]], [['PaymentHeld', '25']], [['PaymentRejected', 'MCP_SPEND_LIMIT_EXCEEDED']]]);

    const careful = await newAgent(100n);
    await ds.query(`INSERT INTO payment.spend_policy (owner_id, agent_id, approval_threshold_minor) VALUES ($1, $2, 20)`, [careful.ownerId, careful.agentId]);
    const asked = request(careful, { operationKey: 'op-1' });
    const again = { ...asked, intentId: randomUUID() };
    await placeHolds(asked, again);
    const ids = [...(await events(asked.intentId)), ...(await events(again.intentId))].map((e) => (e.p['details'] as { approvalId?: string }).approvalId);
    expect(new Set(ids).size).toBe(1);
    expect(Number((await ds.query('SELECT count(*)::int AS n FROM payment.approval WHERE agent_id = $1', [careful.agentId]))[0].n)).toBe(1);
    await ds.query(`UPDATE payment.approval SET status = 'approved' WHERE approval_id = $1`, [ids[0]]);
    const [first, twice] = [{ ...asked, intentId: randomUUID() }, { ...asked, intentId: randomUUID() }];
    await placeHolds(first, twice);
    expect([(await events(first.intentId))[0]!.type, (await events(twice.intentId))[0]!.p['code']]).toEqual(['PaymentHeld', 'MCP_APPROVAL_REQUIRED']);
  });

  it('P3: the free calls of a day are held at zero with no posting, then the tool is paid', async () => {
    const who = await newAgent(100n);
    const [first, second] = [request(who, { freeCallsPerDay: 1 }), request(who, { freeCallsPerDay: 1 })];
    await placeHold(first);
    await placeHold(second);
    expect((await events(first.intentId))[0]).toMatchObject({ type: 'PaymentHeld', p: { free: true, amount: { amountMinor: '0', asset: 'USDC' } } });
    expect((await events(second.intentId))[0]).toMatchObject({ type: 'PaymentHeld', p: { amount: { amountMinor: '25', asset: 'USDC' } } });
    expect(Number((await ds.query(`SELECT count(*)::int AS n FROM payment.posting WHERE intent_id = $1`, [first.intentId]))[0].n)).toBe(0);
    expect((await counters(who.agentId))['free']).toEqual([1, '0']);
    expect(await balance(who.ownerId, 'available')).toBe(75n);
  });

  it('P3: a paused agent and a spend limit refuse with their codes; a call above the approval threshold waits for one approval request', async () => {
    const paused = await newAgent(100n);
    await ds.query(`INSERT INTO payment.spend_policy (owner_id, agent_id, paused) VALUES ($1, $2, true)`, [paused.ownerId, paused.agentId]);
    const p = request(paused);
    await placeHold(p);
    expect((await events(p.intentId)).map((e) => e.p['code'])).toEqual(['MCP_POLICY_AGENT_PAUSED']);

    const limited = await newAgent(100n);
    await ds.query(`INSERT INTO payment.spend_policy (owner_id, agent_id, spend_limit_minor, period) VALUES ($1, $2, 40, 'day')`, [limited.ownerId, limited.agentId]);
    const [ok, over] = [request(limited), request(limited)];
    await placeHold(ok);
    await placeHold(over);
    expect((await events(ok.intentId)).map((e) => e.type)).toEqual(['PaymentHeld']);
    expect((await events(over.intentId))[0]).toMatchObject({ type: 'PaymentRejected', p: { code: 'MCP_SPEND_LIMIT_EXCEEDED', details: { spent: { amountMinor: '25' } } } });

    const careful = await newAgent(100n);
    await ds.query(`INSERT INTO payment.spend_policy (owner_id, agent_id, approval_threshold_minor) VALUES ($1, $2, 20)`, [careful.ownerId, careful.agentId]);
    const asked = request(careful, { operationKey: 'op-1' });
    const again = { ...asked, intentId: randomUUID() };
    await placeHold(asked);
    await placeHold(again);
    const approvalIds = [...(await events(asked.intentId)), ...(await events(again.intentId))].map((e) => [e.p['code'], (e.p['details'] as { approvalId?: string }).approvalId]);
    expect(approvalIds).toEqual([['MCP_APPROVAL_REQUIRED', asked.intentId], ['MCP_APPROVAL_REQUIRED', asked.intentId]]);
    // The owner approves; the retry (same operation key, a new intent) is held and uses the approval up.
    await ds.query(`UPDATE payment.approval SET status = 'approved' WHERE approval_id = $1`, [asked.intentId]);
    const approved = { ...asked, intentId: randomUUID() };
    await placeHold(approved);
    expect((await events(approved.intentId)).map((e) => e.type)).toEqual(['PaymentHeld']);
    expect(await ds.query('SELECT status, used_by_intent FROM payment.approval WHERE approval_id = $1', [asked.intentId])).toEqual([{ status: 'used', used_by_intent: approved.intentId }]);
  });

  it('a CallRequested that was parked is refused for good; a later re-drive of it holds nothing', async () => {
    const who = await newAgent(100n);
    const r = request(who);
    await parked({ payload: r, intentId: r.intentId });
    await placeHold(r);
    expect((await events(r.intentId)).map((e) => [e.type, e.p['code'], e.p['final']])).toEqual([['PaymentRejected', 'INTERNAL_SERVER_ERROR', true]]);
    expect(await balance(who.ownerId, 'available')).toBe(100n);
  });

  it('a parked CallRequested whose refusal cannot be recorded (the fault it was parked for) still gets its final PaymentRejected', async () => {
    const who = await newAgent(100n);
    const r = request(who);
    await ds.query(`CREATE OR REPLACE FUNCTION payment.test_no_charge() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'test: no charge row'; END $$`);
    await ds.query('CREATE TRIGGER test_no_charge BEFORE INSERT ON payment.charge FOR EACH ROW EXECUTE FUNCTION payment.test_no_charge()');
    try {
      await parked({ payload: r, intentId: r.intentId });
    } finally {
      await ds.query('DROP TRIGGER test_no_charge ON payment.charge');
    }
    expect((await events(r.intentId)).map((e) => [e.type, e.p['code'], e.p['final']])).toEqual([['PaymentRejected', 'INTERNAL_SERVER_ERROR', true]]);
  });

  it('a parked CallRequested that broke its contract is answered by the intent it names', async () => {
    const intentId = randomUUID();
    await parked({ intentId });
    expect((await events(intentId)).map((e) => [e.type, e.p['code'], e.p['final']])).toEqual([['PaymentRejected', 'INTERNAL_SERVER_ERROR', true]]);
  });

  it('a capture moves what was served to clearing and frees the rest, once; a void frees it all, once', async () => {
    const who = await newAgent(100n);
    const [served, refunded] = [request(who), request(who)];
    await placeHold(served);
    await placeHold(refunded);
    const servedHold = (await holdOf(served.intentId))!.hold_id;
    const refundedHold = (await holdOf(refunded.intentId))!.hold_id;
    expect(await holdOf(served.intentId)).toMatchObject({ open: true, life: { held: { holdId: servedHold } } });
    for (let i = 0; i < 2; i++) {
      await settle(served.intentId, servedHold, 20n);
      await refund(refunded.intentId, refundedHold);
    }
    // A contradicting end after the hold's call is terminal changes nothing either.
    await refund(served.intentId, servedHold);
    const [s, r] = [(await holdOf(served.intentId))!, (await holdOf(refunded.intentId))!];
    expect({ open: s.open, captured: s.captured_minor, settled: isTerminal(s.life) && s.life.settled !== undefined, refunded: s.life.refunded }).toEqual({ open: false, captured: '20', settled: true, refunded: undefined });
    expect({ open: r.open, captured: r.captured_minor, refunded: isTerminal(r.life) && r.life.refunded !== undefined }).toEqual({ open: false, captured: null, refunded: true });
    expect({ available: await balance(who.ownerId, 'available'), held: await balance(who.ownerId, 'held') }).toEqual({ available: 80n, held: 0n });
    expect(await balanceOf(ds.manager, 'payment', accountKey({ kind: 'clearing' }), 'USDC')).toBeGreaterThanOrEqual(20n);
    const released = [...(await events(served.intentId)), ...(await events(refunded.intentId))].filter((e) => e.type === 'HoldReleased').map((e) => [e.p['outcome'], e.p['captured']]);
    expect(released).toEqual([['captured', { amountMinor: '20', asset: 'USDC' }], ['voided', { amountMinor: '0', asset: 'USDC' }]]);
    expect(await unbalanced()).toBe(0);
  });

  it('money coming back from a hold repays a debt incurred meanwhile first', async () => {
    const who = await newAgent(100n);
    const r = request(who);
    await placeHold(r);
    // A debt of 30 (a chargeback of an earlier deposit the owner had spent).
    await ds.query(`INSERT INTO payment.balance (account, asset, balance) VALUES ($1, 'USDC', -30) ON CONFLICT (account, asset) DO UPDATE SET balance = -30`, [accountKey({ kind: 'debt', ownerId: who.ownerId })]);
    await refund(r.intentId, (await holdOf(r.intentId))!.hold_id);
    const [released] = (await events(r.intentId)).filter((e) => e.type === 'HoldReleased');
    expect(released!.p['repaidDebt']).toEqual({ amountMinor: '25', asset: 'USDC' });
    expect({ debt: await balance(who.ownerId, 'debt'), available: await balance(who.ownerId, 'available') }).toEqual({ debt: -5n, available: 75n });
  });
});
