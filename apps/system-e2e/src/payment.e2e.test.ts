/**
 * G5.3, G5.4, G7, G8, B4: payment and settlement with every app its
 * own process on the real Kafka broker and PostgreSQL — prepaid holds decided
 * by the database, receipts VERIFYING then SETTLED or REFUNDED, the ledger's
 * double-entry balances, spend-policy and payment codes with their next-step
 * fields, the approval flow, x402 payments signed with a generated key,
 * provider statements and payouts that match to the minor unit.
 */
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type DistributedSystem, startDistributedSystem, testPayer, waitFor } from '@tollgate/testing';
import { callThrough, connectAgent, errorOf, postJson, receiptOf, runOpsCli, timelineWhen } from './agent-client';

jest.setTimeout(300_000);

const SERVICES = ['gateway', 'discovery', 'execution', 'payment', 'settlement', 'ledger', 'sample-providers'] as const;
const WINDOW_MS = 1500;

interface AgentHandle { ownerId: string; agentId: string; client: Client }
interface Balances { accounts: { account: string; asset: string; balance: string }[]; totals?: { asset: string; sum: string }[] }

describe('payment and settlement', () => {
  let system: DistributedSystem;
  let token: string;
  let gw: string;
  let pay: string;
  let settle: string;
  let ledger: string;
  const agents: Client[] = [];
  const startedAt = new Date(Date.now() - 60_000);

  const admin = async (method: string, url: string, body?: unknown) => {
    const r = await fetch(url, { method, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, ...(body !== undefined ? { body: JSON.stringify(body) } : {}) });
    return { status: r.status, json: (await r.json()) as Record<string, unknown> };
  };
  const newAgent = async (ownerId?: string): Promise<AgentHandle> => {
    const owner = ownerId ?? ((await postJson(`${gw}/admin/owners`, { name: 'Payer' }, token)).json['ownerId'] as string);
    const a = await postJson(`${gw}/admin/owners/${owner}/agents`, { name: 'Paying agent' }, token);
    const cred = await postJson(`${gw}/admin/agents/${a.json['agentId']}/credentials`, {}, token);
    const client = await connectAgent(`${gw}/mcp/pay`, cred.json['credential'] as string);
    agents.push(client);
    return { ownerId: owner, agentId: a.json['agentId'] as string, client };
  };
  const deposit = (ownerId: string, reference: string, amountMinor: bigint) =>
    postJson(`${pay}/admin/owners/${ownerId}/deposits`, { reference, amount: { amountMinor: amountMinor.toString(), asset: 'USDC' } }, token);
  const wallet = async (ownerId: string) =>
    ((await admin('GET', `${pay}/admin/owners/${ownerId}/wallet`)).json['balances'] as { asset: string; available: string; held: string; debt: string }[])
      .find((b) => b.asset === 'USDC') ?? { asset: 'USDC', available: '0', held: '0', debt: '0' };
  const convert = (c: Client, n: number | string, key?: string, meta?: Record<string, unknown>) =>
    callThrough(c, 'convert_currency', { amount: String(n), from: 'EUR', to: 'USD' }, key, meta);
  const ledgerBalances = async (path = ''): Promise<Balances> => (await admin('GET', `${ledger}/balances${path}`)).json as unknown as Balances;
  const balanceIn = (b: Balances, account: string) => b.accounts.find((a) => a.account === account && a.asset === 'USDC')?.balance ?? '0';
  /** The finance / ops CLI (`tools/ops/src/money.command.ts`) as an operator runs it. */
  const money = async (...args: string[]) => {
    const r = await runOpsCli('ops-money', 'tools/ops/src/tollgate-ops.ts', ['money', '--payment-url', pay, '--settlement-url', settle, '--ledger-url', ledger, '--token', token, ...args]);
    return { code: r.code, json: JSON.parse(r.out.trim()) as Record<string, unknown> };
  };
  /** The ledger's journal (a projection of the events) agrees with payment's own books for this owner, once caught up. */
  const ledgerAgrees = (ownerId: string) => waitFor(`ledger agrees with payment for ${ownerId}`, async () => {
    const w = await wallet(ownerId);
    const b = await ledgerBalances(`/owners/${ownerId}`);
    return balanceIn(b, `owner:${ownerId}:available`) === w.available && balanceIn(b, `owner:${ownerId}:held`) === w.held
      && (-BigInt(balanceIn(b, `owner:${ownerId}:debt`))).toString() === w.debt;
  }, 15_000, 200);
  /** The agent's side of G5.4: replay with the same key until the receipt's status is final. */
  const finalReceipt = async (c: Client, name: string, args: Record<string, unknown>, key: string) => {
    let last: CallToolResult | undefined;
    return waitFor(`final receipt for ${key}`, async () => {
      last = await callThrough(c, name, args, key);
      const s = receiptOf(last)?.status;
      return s === 'SETTLED' || s === 'REFUNDED' ? last : undefined;
    }, 60_000, 300).catch((e) => { throw new Error(`${String(e)}; last answer: ${JSON.stringify(last?._meta)}`); });
  };

  beforeAll(async () => {
    system = await startDistributedSystem(SERVICES, {
      SETTLEMENT_VERIFICATION_WINDOW_MS: String(WINDOW_MS), SETTLEMENT_SWEEP_INTERVAL_MS: '100',
      PAYMENT_VELOCITY_MAX_REPEATS: '3', PAYMENT_VELOCITY_REPEAT_WINDOW_MS: '60000',
      GATEWAY_CALL_DEADLINE_MS: '3000', GATEWAY_CALL_WAIT_MS: '8000', EXECUTION_RECONCILE_INTERVAL_MS: '500', EXECUTION_STALL_GRACE_MS: '1000',
      // The signature-only facilitator, explicitly allowed: this suite has no chain to settle on.
      PAYMENT_X402_FACILITATOR: 'local', PAYMENT_X402_ALLOW_LOCAL_FACILITATOR: 'true',
      PAYMENT_X402_NETWORK: 'eip155:84532', PAYMENT_X402_PAY_TO: '0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c',
    });
    token = system.adminToken;
    gw = system.url('gateway');
    pay = system.url('payment');
    settle = system.url('settlement');
    ledger = system.url('ledger');
    const providers = `${system.url('sample-providers')}/providers`;
    expect((await postJson(`${gw}/admin/mcp-urls`, { slug: 'pay', discoveryMode: 'search' }, token)).status).toBe(201);
    for (const p of ['catalog-demo', 'odd-tools', 'flaky-a', 'flaky-b', 'slow-tools']) {
      expect((await postJson(`${system.url('discovery')}/admin/providers`, { providerId: p, endpoint: `${providers}/${p}/mcp` }, token)).json['ok']).toBe(true);
    }
    // Refund paths need paid tools that fail: prices set by the admin, as a reviewer would.
    for (const [tool, priceMinor] of [['broken_stats', '700'], ['flaky_lookup', '400'], ['slow_echo', '300']] as const) {
      expect((await admin('PATCH', `${system.url('discovery')}/admin/tools/${tool}`, { priceMinor, asset: 'USDC' })).status).toBe(200);
    }
    const probe = await newAgent();
    await waitFor('paid catalog in the gateway', async () => {
      const r = (await probe.client.callTool({ name: 'get_tool', arguments: { name: 'slow_echo' } })) as CallToolResult;
      const t = (await probe.client.callTool({ name: 'get_tool', arguments: { name: 'convert_currency' } })) as CallToolResult;
      return !errorOf(r) && !errorOf(t) && (r.structuredContent as { price: unknown }).price !== null;
    }, 90_000, 300);
  });

  afterAll(async () => {
    await Promise.all(agents.map((c) => c.close().catch(() => undefined)));
    await system?.stop();
  });

  describe('wallets and holds', () => {
    it('credits a deposit once per external reference', async () => {
      const { ownerId } = await newAgent();
      expect(await deposit(ownerId, `bank-${ownerId}`, 1000n)).toMatchObject({ status: 201, json: { credited: true } });
      expect(await deposit(ownerId, `bank-${ownerId}`, 1000n)).toMatchObject({ status: 200, json: { credited: false } });
      expect(await wallet(ownerId)).toEqual({ asset: 'USDC', available: '1000', held: '0', debt: '0' });
      expect((await postJson(`${pay}/admin/owners/${ownerId}/deposits`, { reference: 'x', amount: { amountMinor: '1.5', asset: 'USDC' } }, token)).status).toBe(400);
      // Amounts are bounded where money enters (a 19-digit deposit overflowed the balance column before).
      expect((await deposit(ownerId, `bank-huge-${ownerId}`, 10n ** 18n)).status).toBe(400);
      expect((await deposit(ownerId, `bank-huge2-${ownerId}`, 9_223_372_036_854_775_807n)).status).toBe(400);
      expect(await wallet(ownerId)).toEqual({ asset: 'USDC', available: '1000', held: '0', debt: '0' });
    });

    it('a paid call: receipt VERIFYING with the amount held, then SETTLED; the ledger shows the split and sums to zero; a replay charges nothing', async () => {
      const { ownerId, client } = await newAgent();
      await deposit(ownerId, `bank-paid-${ownerId}`, 2000n);
      const key = `paid-${Date.now()}`;
      const first = await convert(client, 10, key);
      expect(first.isError).toBeFalsy();
      expect(receiptOf(first)).toMatchObject({
        status: 'VERIFYING', toolId: 'convert_currency', providerId: 'catalog-demo', classification: 'ok', attempts: 1,
        held: { asset: 'USDC', amountMinor: '500', display: '0.0005 USDC' }, charged: { asset: 'USDC', amountMinor: '0' },
      });
      expect(await wallet(ownerId)).toMatchObject({ available: '1500', held: '500' });

      const settled = await finalReceipt(client, 'convert_currency', { amount: '10', from: 'EUR', to: 'USD' }, key);
      expect(settled._meta?.['assay/replayed']).toBe(true);
      expect(settled.content).toEqual(first.content);
      expect(receiptOf(settled)).toMatchObject({ intentId: receiptOf(first)!.intentId, status: 'SETTLED', charged: { amountMinor: '500', display: '0.0005 USDC' }, held: { amountMinor: '0' } });
      await waitFor('hold captured in payment', async () => (await wallet(ownerId)).held === '0', 10_000, 100);
      expect(await wallet(ownerId)).toMatchObject({ available: '1500', held: '0' });

      const t = await timelineWhen(`${ledger}/calls`, receiptOf(first)!.intentId, (x) => x.timeline.some((e) => e.type === 'CallSettled'), token);
      const settledEvent = t.timeline.find((e) => e.type === 'CallSettled')!;
      expect(settledEvent.producer).toBe('settlement');
      expect(settledEvent.details).toMatchObject({ amount: { amountMinor: '500' }, fee: { amountMinor: '50' }, providerNet: { amountMinor: '450' } });
      expect(t.timeline.map((e) => e.type)).toEqual(expect.arrayContaining(['CallRequested', 'PaymentHeld', 'CallDispatched', 'ResultReceived', 'EffectConfirmed', 'CallSettled']));
      const owner = await waitFor('ledger journal', async () => {
        const b = await ledgerBalances(`/owners/${ownerId}`);
        return balanceIn(b, `owner:${ownerId}:held`) === '0' && balanceIn(b, `owner:${ownerId}:available`) === '1500' ? b : undefined;
      }, 10_000, 200);
      expect(balanceIn(owner, `owner:${ownerId}:available`)).toBe('1500');
      const all = await ledgerBalances();
      expect(all.totals).toEqual([{ asset: 'USDC', sum: '0' }]);
      // A replay after settlement charges nothing more.
      await convert(client, 10, key);
      expect(await wallet(ownerId)).toMatchObject({ available: '1500', held: '0' });
    });

    it('with balance B and N simultaneous calls of price p, exactly ⌊B/p⌋ are held (the database decides)', async () => {
      const { ownerId, client } = await newAgent();
      await deposit(ownerId, `bank-race-${ownerId}`, 2200n);
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => convert(client, 100 + i, `race-${ownerId}-${i}`)));
      const ok = results.filter((r) => !r.isError);
      const refused = results.map(errorOf).filter((e) => e !== undefined);
      expect(ok).toHaveLength(4); // ⌊2200 / 500⌋
      expect(refused).toHaveLength(8);
      for (const e of refused) {
        expect(e).toMatchObject({ code: 'PAYMENT_INSUFFICIENT_FUNDS', retryable: false, intentId: expect.any(String), details: { price: { amountMinor: '500', asset: 'USDC' } } });
      }
      expect(await wallet(ownerId)).toMatchObject({ available: '200' });
    });
  });

  describe('refunds: no call is both settled and refunded', () => {
    let a: AgentHandle;
    beforeAll(async () => {
      a = await newAgent();
      await deposit(a.ownerId, `bank-refunds-${a.ownerId}`, 5000n);
    });

    it('a contract violation is refunded', async () => {
      const key = `violation-${Date.now()}`;
      const r = await callThrough(a.client, 'broken_stats', {}, key);
      expect(errorOf(r)).toMatchObject({ code: 'PROVIDER_CONTRACT_VIOLATION', retryable: false, intentId: expect.any(String) });
      const final = await finalReceipt(a.client, 'broken_stats', {}, key);
      expect(receiptOf(final)).toMatchObject({ status: 'REFUNDED', charged: { amountMinor: '0' }, held: { amountMinor: '0' } });
      const t = await timelineWhen(`${ledger}/calls`, receiptOf(final)!.intentId, (x) => x.timeline.some((e) => e.type === 'CallRefunded'), token);
      expect(t.timeline.filter((e) => e.type === 'CallSettled')).toHaveLength(0);
      expect(t.timeline.find((e) => e.type === 'CallRefunded')!.details).toMatchObject({ amount: { amountMinor: '700' }, reason: 'PROVIDER_CONTRACT_VIOLATION' });
    });

    it('a failed call (every binding failing) is refunded', async () => {
      const providers = `${system.url('sample-providers')}/providers`;
      await postJson(`${providers}/flaky/faults`, { 'flaky-a': 5, 'flaky-b': 5 }, system.providersToken);
      const key = `failed-${Date.now()}`;
      const r = await callThrough(a.client, 'flaky_lookup', { code: 'X1' }, key);
      expect(errorOf(r)).toMatchObject({ code: 'TOOL_ALL_BINDINGS_FAILED' });
      const final = await finalReceipt(a.client, 'flaky_lookup', { code: 'X1' }, key);
      expect(receiptOf(final)).toMatchObject({ status: 'REFUNDED', charged: { amountMinor: '0' } });
      await postJson(`${providers}/flaky/faults`, { 'flaky-a': 0, 'flaky-b': 0 }, system.providersToken);
    });

    it('an unknown outcome reconciled as not having happened is refunded', async () => {
      const key = `unknown-${Date.now()}`;
      const args = { message: 'too late', delayMs: 8000 };
      const first = await callThrough(a.client, 'slow_echo', args, key);
      expect(['IDEMPOTENCY_IN_PROGRESS', 'IDEMPOTENCY_RESULT_UNAVAILABLE']).toContain(errorOf(first)?.code);
      const final = await finalReceipt(a.client, 'slow_echo', args, key);
      expect(receiptOf(final)).toMatchObject({ status: 'REFUNDED', charged: { amountMinor: '0' } });
      expect(errorOf(final)?.code).toBe('PROVIDER_SYSTEM_ERROR');
    });

    it('gives every refunded hold back: the wallet holds nothing and lost nothing', async () => {
      await waitFor('holds released', async () => (await wallet(a.ownerId)).held === '0', 20_000, 200);
      expect(await wallet(a.ownerId)).toEqual({ asset: 'USDC', available: '5000', held: '0', debt: '0' });
      await ledgerAgrees(a.ownerId);
    });
  });

  describe('payment and spend-policy codes (G8) with their next-step fields', () => {
    it('PAYMENT_INSUFFICIENT_FUNDS names the price and what is available', async () => {
      const { ownerId, client } = await newAgent();
      await deposit(ownerId, `bank-short-${ownerId}`, 100n);
      const e = errorOf(await convert(client, 1));
      expect(e).toMatchObject({
        code: 'PAYMENT_INSUFFICIENT_FUNDS', retryable: false, intentId: expect.any(String),
        details: { price: { amountMinor: '500', asset: 'USDC' }, available: { amountMinor: '100', asset: 'USDC' } },
      });
      expect(e?.message).toMatch(/Top up/);
    });

    it('MCP_POLICY_AGENT_PAUSED, then the call goes through once resumed', async () => {
      const { ownerId, agentId, client } = await newAgent();
      await deposit(ownerId, `bank-pause-${ownerId}`, 1000n);
      expect((await admin('PUT', `${pay}/admin/owners/${ownerId}/agents/${agentId}/spend-policy`, { paused: true })).json).toMatchObject({ paused: true });
      expect(errorOf(await convert(client, 2))).toMatchObject({ code: 'MCP_POLICY_AGENT_PAUSED', retryable: false, intentId: expect.any(String) });
      await admin('PUT', `${pay}/admin/owners/${ownerId}/agents/${agentId}/spend-policy`, { paused: false });
      expect((await convert(client, 2)).isError).toBeFalsy();
    });

    it('MCP_SPEND_LIMIT_EXCEEDED names the limit, what was spent and when it resets', async () => {
      const { ownerId, agentId, client } = await newAgent();
      await deposit(ownerId, `bank-limit-${ownerId}`, 5000n);
      await admin('PUT', `${pay}/admin/owners/${ownerId}/agents/${agentId}/spend-policy`, { spendLimitMinor: '1200', period: 'day' });
      expect((await convert(client, 1)).isError).toBeFalsy();
      expect((await convert(client, 2)).isError).toBeFalsy();
      const e = errorOf(await convert(client, 3));
      expect(e).toMatchObject({
        code: 'MCP_SPEND_LIMIT_EXCEEDED', retryable: false,
        details: { limit: { amountMinor: '1200' }, spent: { amountMinor: '1000' }, price: { amountMinor: '500' }, period: 'day', resetsAt: expect.stringMatching(/T00:00:00.000Z$/) },
      });
    });

    it('MCP_VELOCITY_LIMIT_EXCEEDED for the same request repeated too fast, with retryAfterMs', async () => {
      const { ownerId, client } = await newAgent();
      await deposit(ownerId, `bank-velocity-${ownerId}`, 5000n);
      for (let i = 0; i < 3; i++) expect((await convert(client, 7)).isError).toBeFalsy();
      const e = errorOf(await convert(client, 7));
      expect(e).toMatchObject({ code: 'MCP_VELOCITY_LIMIT_EXCEEDED', retryable: true, retryAfterMs: 60_000, details: { rule: 'repeat', limit: 3 } });
      // Another request is not the same request.
      expect((await convert(client, 8)).isError).toBeFalsy();
    });

    it('MCP_QUOTA_EXCEEDED once the daily free calls are used; freeCallsLeftToday counts down', async () => {
      const { client } = await newAgent();
      const left = async () => ((await client.callTool({ name: 'get_tool', arguments: { name: 'lookup_ip' } })) as CallToolResult).structuredContent as { freeCallsLeftToday: number };
      expect((await left()).freeCallsLeftToday).toBe(5);
      for (let i = 0; i < 5; i++) {
        const r = await callThrough(client, 'lookup_ip', { ip: `10.0.0.${i}` });
        expect(r.isError).toBeFalsy();
        expect(receiptOf(r)).toMatchObject({ held: { amountMinor: '0' } });
      }
      expect((await left()).freeCallsLeftToday).toBe(0);
      const e = errorOf(await callThrough(client, 'lookup_ip', { ip: '10.0.0.99' }));
      expect(e).toMatchObject({ code: 'MCP_QUOTA_EXCEEDED', retryable: true, retryAfterMs: expect.any(Number), details: { freeCallsPerDay: 5, resetsAt: expect.stringMatching(/T00:00:00.000Z$/) } });
      expect(e!.retryAfterMs!).toBeLessThanOrEqual(24 * 3600_000);
    });

    it('PAYMENT_DEBT_OUTSTANDING after a spent deposit is charged back; a new deposit repays the debt first', async () => {
      const { ownerId, client } = await newAgent();
      await deposit(ownerId, `bank-debt-${ownerId}`, 600n);
      expect((await convert(client, 1)).isError).toBeFalsy();
      expect((await admin('POST', `${pay}/admin/deposits/bank-debt-${ownerId}/chargeback`)).json).toMatchObject({ chargedBack: true });
      expect(await wallet(ownerId)).toMatchObject({ available: '0', debt: '500' });
      await ledgerAgrees(ownerId);
      const e = errorOf(await convert(client, 2));
      expect(e).toMatchObject({ code: 'PAYMENT_DEBT_OUTSTANDING', retryable: false, details: { debt: { amountMinor: '500', asset: 'USDC' } } });
      await deposit(ownerId, `bank-repay-${ownerId}`, 1000n);
      expect(await wallet(ownerId)).toMatchObject({ available: '500', debt: '0' });
      expect((await convert(client, 2)).isError).toBeFalsy();
      await ledgerAgrees(ownerId);
    });

    it('the approval flow: MCP_APPROVAL_REQUIRED names the approval; once the owner approves, the retry with the same key proceeds — once', async () => {
      const { ownerId, agentId, client } = await newAgent();
      await deposit(ownerId, `bank-approval-${ownerId}`, 5000n);
      await admin('PUT', `${pay}/admin/owners/${ownerId}/agents/${agentId}/spend-policy`, { approvalThresholdMinor: '400' });
      const key = `approve-${Date.now()}`;
      const first = errorOf(await convert(client, 42, key));
      expect(first).toMatchObject({ code: 'MCP_APPROVAL_REQUIRED', retryable: true, details: { approvalId: expect.any(String), threshold: { amountMinor: '400' }, price: { amountMinor: '500' } } });
      // Asking again before the decision names the same approval and charges nothing.
      expect(errorOf(await convert(client, 42, key))?.details?.['approvalId']).toBe(first!.details!['approvalId']);
      // The owner decides through the ops CLI (the admin API underneath).
      const pending = await money('approvals', '--owner', ownerId);
      expect(pending.json['approvals']).toEqual([expect.objectContaining({ approvalId: first!.details!['approvalId'], operationKey: key, amount: { amountMinor: '500', asset: 'USDC' } })]);
      expect(await money('approve', first!.details!['approvalId'] as string, '--by', 'owner@example.com')).toEqual({ code: 0, json: expect.objectContaining({ status: 'approved', decidedBy: 'owner@example.com' }) });
      expect((await money('approve', first!.details!['approvalId'] as string, '--by', 'owner@example.com')).code).toBe(1);
      const approved = await convert(client, 42, key);
      expect(approved.isError).toBeFalsy();
      expect(receiptOf(approved)).toMatchObject({ held: { amountMinor: '500' } });
      // The approval was for that operation: a new key asks again.
      expect(errorOf(await convert(client, 42, `${key}-again`))?.code).toBe('MCP_APPROVAL_REQUIRED');
      expect(await wallet(ownerId)).toMatchObject({ available: '4500' });
    });
  });

  describe('x402 (G7): an agent without a prepaid balance pays per call', () => {
    let a: AgentHandle;
    const payer = testPayer();
    const required = (r: CallToolResult) => r._meta?.['x402/paymentRequired'] as { x402Version: number; resource: unknown; accepts: Parameters<typeof payer.sign>[0][] };

    beforeAll(async () => {
      a = await newAgent();
    });

    it('PAYMENT_REQUIRED carries the x402 version 2 requirement', async () => {
      const r = await convert(a.client, 1, `x402-req-${Date.now()}`);
      expect(errorOf(r)).toMatchObject({ code: 'PAYMENT_REQUIRED', retryable: true, details: { price: { amountMinor: '500', asset: 'USDC' } } });
      expect(required(r)).toMatchObject({
        x402Version: 2, resource: { url: 'mcp://tollgate/tools/convert_currency', mimeType: 'application/json' },
        accepts: [{ scheme: 'exact', network: 'eip155:84532', amount: '500', asset: expect.stringMatching(/^0x[0-9a-fA-F]{40}$/), payTo: expect.stringMatching(/^0x/), maxTimeoutSeconds: 60, extra: { name: 'USDC', version: '2' } }],
      });
    });

    it('a valid payment is accepted once; the same payment replayed, an expired one, one under the price and one for another network are refused', async () => {
      const key = `x402-ok-${Date.now()}`;
      const asked = await convert(a.client, 5, key);
      const req = required(asked).accepts[0]!;
      const payment = await payer.sign(req);
      const paid = await convert(a.client, 5, key, { 'x402/payment': payment });
      expect(paid.isError).toBeFalsy();
      expect(paid._meta?.['x402/payment-response']).toMatchObject({ success: true, network: 'eip155:84532', payer: payer.address, transaction: expect.stringMatching(/^0x[0-9a-f]{64}$/) });
      expect(receiptOf(paid)).toMatchObject({ status: 'VERIFYING', held: { amountMinor: '500' } });

      const replayed = errorOf(await convert(a.client, 6, `x402-replay-${Date.now()}`, { 'x402/payment': payment }));
      expect(replayed).toMatchObject({ code: 'PAYMENT_REQUIRED', retryable: true, details: { reason: 'nonce_already_used' } });

      const now = BigInt(Math.floor(Date.now() / 1000));
      const expired = errorOf(await convert(a.client, 7, `x402-expired-${Date.now()}`, { 'x402/payment': await payer.sign(req, { validAfter: now - 600n, validBefore: now - 10n }) }));
      expect(expired).toMatchObject({ code: 'PAYMENT_REQUIRED', details: { reason: 'authorization_expired' } });

      const under = errorOf(await convert(a.client, 8, `x402-under-${Date.now()}`, { 'x402/payment': await payer.sign(req, { value: 499n }) }));
      expect(under).toMatchObject({ code: 'PAYMENT_REQUIRED', details: { reason: 'insufficient_amount' } });

      const otherChain = await convert(a.client, 9, `x402-chain-${Date.now()}`, { 'x402/payment': await payer.sign(req, { network: 'eip155:1' }) });
      expect(errorOf(otherChain)).toMatchObject({ code: 'PAYMENT_NO_SETTLEABLE_CHAIN', retryable: false, details: { network: 'eip155:1', supportedNetworks: ['eip155:84532'] } });
      expect(otherChain._meta?.['x402/paymentRequired']).toBeDefined();

      // Exactly one payment credited, and it paid exactly one call.
      expect(await wallet(a.ownerId)).toMatchObject({ available: '0' });
    });

    it('a payment signed for more than the price mints nothing (the exact scheme pays the price)', async () => {
      const fresh = await newAgent();
      const req = required(await convert(fresh.client, 10, `x402-big-ask-${Date.now()}`)).accepts[0]!;
      const big = errorOf(await convert(fresh.client, 10, `x402-big-${Date.now()}`, { 'x402/payment': await payer.sign(req, { value: 10n ** 12n }) }));
      expect(big).toMatchObject({ code: 'PAYMENT_REQUIRED', retryable: true, details: { reason: 'amount_mismatch' } });
      expect(await wallet(fresh.ownerId)).toEqual({ asset: 'USDC', available: '0', held: '0', debt: '0' });
    });

    it('an authorization of 2^63 or more is refused at once and never stalls other owners\' calls', async () => {
      const fresh = await newAgent();
      const other = await newAgent();
      await deposit(other.ownerId, `other-${Date.now()}`, 10_000n);
      const req = required(await convert(fresh.client, 11, `x402-huge-ask-${Date.now()}`)).accepts[0]!;
      const huge = errorOf(await convert(fresh.client, 11, `x402-huge-${Date.now()}`, { 'x402/payment': await payer.sign(req, { value: 2n ** 63n }) }));
      expect(huge).toMatchObject({ code: 'PAYMENT_REQUIRED', retryable: true, details: { reason: 'amount_mismatch' } });
      // Stalled, this call would answer IDEMPOTENCY_IN_PROGRESS once the gateway's wait (8 s here) ran out.
      const fine = await convert(other.client, 12, `after-huge-${Date.now()}`);
      expect(errorOf(fine)).toBeUndefined();
      expect(receiptOf(fine)).toMatchObject({ held: { amountMinor: '500' } });
      expect(await wallet(fresh.ownerId)).toMatchObject({ available: '0', held: '0' });
    });
  });

  describe('finance API behind finance tokens', () => {
    const get = (path: string, auth?: string) => fetch(`${ledger}${path}`, auth === undefined ? {} : { headers: { authorization: auth } });
    const issue = async (body: Record<string, unknown>) => (await postJson(`${ledger}/admin/finance-tokens`, body, token)).json as { tokenId: string; token: string };

    it('refuses every finance route without a finance token — none, an agent credential, a bare token, a revoked one', async () => {
      const a = await newAgent();
      await deposit(a.ownerId, `bank-fin-${a.ownerId}`, 1000n);
      const intentId = receiptOf(await convert(a.client, 21, `fin-${Date.now()}`))!.intentId;
      const agentCred = (await postJson(`${gw}/admin/agents/${a.agentId}/credentials`, {}, token)).json['credential'] as string;
      const finance = await issue({ label: 'books' });
      for (const path of ['/balances', `/balances/owners/${a.ownerId}`, '/balances/providers/catalog-demo', `/calls/${intentId}`]) {
        for (const auth of [undefined, `Bearer ${agentCred}`, finance.token, `Basic ${finance.token}`, 'Bearer ']) {
          const r = await get(path, auth);
          expect({ path, auth, status: r.status }).toEqual({ path, auth, status: 401 });
          expect(await r.json()).toMatchObject({ code: 'FINANCE_TOKEN_INVALID' });
        }
      }
      expect((await get('/balances', `Bearer ${finance.token}`)).status).toBe(200);
      // A finance token is not an admin credential.
      expect((await postJson(`${ledger}/admin/finance-tokens`, { label: 'escalate' }, finance.token)).status).toBe(401);
      expect((await admin('DELETE', `${ledger}/admin/finance-tokens/${finance.tokenId}`)).status).toBe(200);
      expect((await get('/balances', `Bearer ${finance.token}`)).status).toBe(401);
      // Revoking it again (or a token that never was) finds no live token: 404, not a second success.
      expect((await admin('DELETE', `${ledger}/admin/finance-tokens/${finance.tokenId}`)).status).toBe(404);
    });

    it('an owner-scoped token reads only its owner; finance views omit operation keys and payment signatures, operators see them', async () => {
      const a = await newAgent();
      const b = await newAgent();
      await deposit(a.ownerId, `bank-fa-${a.ownerId}`, 1000n);
      await deposit(b.ownerId, `bank-fb-${b.ownerId}`, 1000n);
      const keyA = `fin-a-${Date.now()}`;
      const intentA = receiptOf(await convert(a.client, 22, keyA))!.intentId;
      const intentB = receiptOf(await convert(b.client, 23, `fin-b-${Date.now()}`))!.intentId;
      const scoped = await issue({ label: 'owner A auditor', ownerId: a.ownerId });
      const operator = await issue({ label: 'on call', role: 'operator' });
      const asScoped = `Bearer ${scoped.token}`;
      expect((await get(`/balances/owners/${a.ownerId}`, asScoped)).status).toBe(200);
      expect((await get(`/balances/owners/${b.ownerId}`, asScoped)).status).toBe(403);
      expect((await get('/balances', asScoped)).status).toBe(403);
      expect((await get('/balances/providers/catalog-demo', asScoped)).status).toBe(403);
      // The call's facts travel on several topics: wait for both the request and the hold.
      const mine = await timelineWhen(`${ledger}/calls`, intentA, (t) => t.timeline.some((e) => e.type === 'PaymentHeld') && t.timeline.some((e) => e.type === 'CallRequested'), scoped.token);
      const requested = mine.timeline.find((e) => e.type === 'CallRequested')!;
      expect(requested.details).toMatchObject({ ownerId: a.ownerId });
      expect(requested.details).not.toHaveProperty('operationKey');
      expect(JSON.stringify(mine)).not.toContain(keyA);
      await timelineWhen(`${ledger}/calls`, intentB, () => true, token);
      expect((await get(`/calls/${intentB}`, asScoped)).status).toBe(404);
      const full = await timelineWhen(`${ledger}/calls`, intentA, () => true, operator.token);
      expect(full.timeline.find((e) => e.type === 'CallRequested')!.details).toMatchObject({ operationKey: keyA });
    });
  });

  describe('provider statements and payouts', () => {
    it("a statement's net equals the payout to the minor unit; a second payout of the period pays nothing", async () => {
      await waitFor('every paid call settled or refunded', async () => {
        const s = (await admin('GET', `${settle}/admin/providers/catalog-demo/statement?periodStart=${startedAt.toISOString()}&periodEnd=${new Date(Date.now() + 60_000).toISOString()}`)).json;
        const lines = s['lines'] as { calls: number }[];
        return lines.length > 0 && (await ledgerBalances()).totals!.every((t) => t.sum === '0');
      }, 30_000, 300);
      await new Promise((r) => setTimeout(r, WINDOW_MS + 1000));
      const periodEnd = new Date(Date.now() + 60_000).toISOString();
      const before = (await admin('GET', `${settle}/admin/providers/catalog-demo/statement?periodStart=${startedAt.toISOString()}&periodEnd=${periodEnd}`)).json;
      const line = (before['lines'] as { asset: string; calls: number; gross: string; fees: string; net: string; unpaid: string }[]).find((l) => l.asset === 'USDC')!;
      expect(line.calls).toBeGreaterThan(5);
      expect(BigInt(line.gross) - BigInt(line.fees)).toBe(BigInt(line.net));
      expect(BigInt(line.fees)).toBe(BigInt(line.gross) / 10n);

      const out = await money('payout', 'catalog-demo', '--from', startedAt.toISOString(), '--to', periodEnd);
      expect(out.code).toBe(0);
      const payouts = out.json['payouts'] as { asset: string; amountMinor: string; calls: number }[];
      expect(payouts).toEqual([expect.objectContaining({ asset: 'USDC', amountMinor: line.net, calls: line.calls })]);
      const after = out.json['statement'] as { lines: { paid: string; unpaid: string }[]; payable: { asset: string; amountMinor: string }[] };
      expect(after.lines[0]).toMatchObject({ paid: line.net, unpaid: '0' });
      expect(after.payable).toEqual([{ asset: 'USDC', amountMinor: '0' }]);

      const again = await money('payout', 'catalog-demo', '--from', startedAt.toISOString(), '--to', periodEnd);
      expect(again.json['payouts']).toEqual([]);
      const provider = await waitFor('payout in the ledger', async () => {
        const b = await ledgerBalances('/providers/catalog-demo');
        return balanceIn(b, 'provider:catalog-demo:payable') === '0' ? b : undefined;
      }, 10_000, 200);
      expect(provider.accounts).toEqual([{ account: 'provider:catalog-demo:payable', asset: 'USDC', balance: '0' }]);
      expect((await money('balances')).json['totals']).toEqual([{ asset: 'USDC', sum: '0' }]);
    });
  });
});
