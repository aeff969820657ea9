/**
 * G5.3, G5.4, B6 — priced by use, from the prepaid wallet, against `npm start` (embedded): the demo's metered tool
 * (summarize_text, 0.001 USDC per 100 characters read, at least 0.005, at most 0.10) is listed with its price; a call
 * holds the maximum, the provider reports what it read, the charge is units × unit price (at least the minimum, never
 * past the hold), the rest of the hold goes back to the wallet, and the receipt shows held, charged and usage. The
 * same operation key replays without buying again; a provider that over-reports, under-reports, reports garbage or
 * nothing is charged by the documented rule; x402 is refused for a metered tool where the facilitator has no upto; a malformed metered price is refused
 * naming the field. Both MCP eras' SDK clients make the calls.
 */
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client as PgClient } from 'pg';
import { freePort, type RunningProcess, startTsProcess, waitFor } from '@tollgate/testing';
import { callThrough, connectAgent, connectModernAgent, errorOf, type EmbeddedSystem, postJson, receiptOf, runOpsCli, startEmbeddedSystem } from './agent-client';

jest.setTimeout(240_000);

const PROVIDERS_TOKEN = 'metered-providers-token-0123456789';
const HOLD = 100_000n;

describe('metered calls from the wallet (embedded)', () => {
  let system: EmbeddedSystem;
  let providers: RunningProcess;
  let agent: Client;
  let pg: PgClient;
  let ownerId: string;

  const wallet = async () => BigInt((await pg.query(`SELECT balance::text AS b FROM payment.balance WHERE account = $1`, [`owner:${ownerId}:available`])).rows[0]?.b ?? '0');
  const admin = (method: string, p: string, body?: unknown) => fetch(`${system.base}${p}`, { method, headers: { 'content-type': 'application/json', authorization: `Bearer ${system.adminToken}` }, body: JSON.stringify(body) });
  /** The receipt once settled: the same operation key replays the call's answer with its current status. */
  const settled = (tool: string, args: Record<string, unknown>, key: string) => waitFor(`${key} settled`, async () => {
    const r = await callThrough(agent, tool, args, key);
    return receiptOf(r)?.status === 'SETTLED' ? r : undefined;
  }, 30_000, 300);
  const charged = (r: CallToolResult) => receiptOf(r)!.charged.amountMinor;
  /** The wallet once no call of the owner holds money any more (an earlier test's call may still be in its window). */
  const settledWallet = async () => {
    await waitFor('nothing held', async () => BigInt((await pg.query(`SELECT balance::text AS b FROM payment.balance WHERE account = $1`, [`owner:${ownerId}:held`])).rows[0]?.b ?? '0') === 0n || undefined, 30_000, 200);
    return wallet();
  };

  beforeAll(async () => {
    const port = await freePort();
    providers = startTsProcess('sample-providers', 'apps/sample-providers/src/main.ts', [], { PORT: String(port), SAMPLE_PROVIDERS_TOKEN: PROVIDERS_TOKEN });
    await providers.waitForOutput(/listening/, 120_000);
    system = await startEmbeddedSystem('metered', { DEMO_MONEY: 'true', SETTLEMENT_VERIFICATION_WINDOW_MS: '200', UPSTREAM_CREDENTIALS: `http://127.0.0.1:${port}=${PROVIDERS_TOKEN}` });
    ownerId = system.demo['ownerId']!;
    pg = new PgClient({ connectionString: system.demo['databaseUrl'] });
    await pg.connect();
    expect((await postJson(`${system.base}/admin/providers`, { providerId: 'metered-fixtures', endpoint: `http://127.0.0.1:${port}/providers/metered-fixtures/mcp` }, system.adminToken)).status).toBe(201);
    agent = await connectAgent(system.demo['searchMcpUrl']!, system.demo['credential']!);
    await waitFor('report_usage in the catalog', async () => !errorOf((await agent.callTool({ name: 'get_tool', arguments: { name: 'report_usage' } })) as CallToolResult), 60_000, 300);
  });

  afterAll(async () => {
    await agent?.close();
    await pg?.end();
    await system?.stop();
    await providers?.stop();
  });

  it('lists the metered price to agents: get_tool, search_tools and tools/list say the most a call can cost', async () => {
    const display = '0.001 USDC per 100_chars, at least 0.005 USDC, at most 0.10 USDC a call';
    const got = (await agent.callTool({ name: 'get_tool', arguments: { name: 'summarize_text' } })) as CallToolResult;
    expect((got.structuredContent as { price: unknown }).price).toEqual({
      amountMinor: '100000', asset: 'USDC', decimals: 6, display, metered: { unit: '100_chars', unitPriceMinor: '1000', minimumMinor: '5000', maximumMinor: '100000' },
    });
    const found = (await agent.callTool({ name: 'search_tools', arguments: { query: 'summarise a text' } })) as CallToolResult;
    expect((found.structuredContent as { results: { name: string; price: string }[] }).results).toContainEqual(expect.objectContaining({ name: 'summarize_text', price: display }));
    const listed = await connectModernAgent(system.demo['mcpUrl']!, system.demo['credential']!);
    try {
      const tool = (await listed.listTools()).tools.find((t) => t.name === 'summarize_text');
      expect(tool?._meta?.['assay/price']).toMatchObject({ amountMinor: '100000', display });
      // The 2026-07-28 client calls it directly: held at the maximum, its usage on the receipt.
      const direct = (await listed.callTool({ name: 'summarize_text', arguments: { text: 'y'.repeat(301) } })) as CallToolResult;
      expect(receiptOf(direct)).toMatchObject({ status: 'VERIFYING', held: { amountMinor: '100000' }, usage: { unit: '100_chars', units: '4' } });
    } finally {
      await listed.close();
    }
  });

  it('holds the maximum, charges units × unit price, releases the rest, and replays under the same key', async () => {
    const text = 'Metering is fair. '.repeat(70); // 1,260 characters: 13 units of 100
    const before = await settledWallet();
    const first = await callThrough(agent, 'summarize_text', { text }, 'metered-1');
    expect(errorOf(first)).toBeUndefined();
    expect(receiptOf(first)).toMatchObject({ status: 'VERIFYING', held: { amountMinor: HOLD.toString() } });
    expect((receiptOf(first) as unknown as { usage: unknown }).usage).toEqual({ unit: '100_chars', units: '13', unitPrice: expect.objectContaining({ amountMinor: '1000' }), minimum: expect.objectContaining({ amountMinor: '5000' }) });
    const done = await settled('summarize_text', { text }, 'metered-1');
    expect(receiptOf(done)).toMatchObject({ intentId: receiptOf(first)!.intentId, status: 'SETTLED', charged: { amountMinor: '13000', display: '0.013 USDC' } });
    expect(before - (await wallet())).toBe(13_000n);
    // The same key again: the same call, nothing bought twice.
    const again = await callThrough(agent, 'summarize_text', { text }, 'metered-1');
    expect(receiptOf(again)?.intentId).toBe(receiptOf(first)!.intentId);
    expect(before - (await wallet())).toBe(13_000n);
  });

  it.each([
    ['over-reports past the hold: charged the hold', { unit: '100_chars', units: 5000 }, '100000'],
    ['under-reports below the minimum: charged the minimum', { units: 1 }, '5000'],
    ['reports a reasonable usage: charged by it', { units: '42' }, '42000'],
    ['reports garbage: charged the minimum', { units: 'lots' }, '5000'],
    ['reports a negative usage: charged the minimum', { units: -7 }, '5000'],
    ['reports another unit: charged the minimum', { unit: 'tokens', units: 3 }, '5000'],
    ['reports nothing: charged the minimum', undefined, '5000'],
  ])('a provider that %s', async (_what, usage, expected) => {
    const key = `report-${JSON.stringify(usage ?? null)}`;
    const before = await settledWallet();
    const done = await settled('report_usage', { text: 'x', ...(usage === undefined ? {} : { usage }) }, key);
    expect(charged(done)).toBe(expected);
    expect(before - (await wallet())).toBe(BigInt(expected));
  });

  it('a provider that reports in the x402 Settlement-Overrides header: charged by it, the header never reaches the agent', async () => {
    const before = await settledWallet();
    const done = await settled('report_usage', { text: 'x', settlementOverrides: '{"amount":"23500"}' }, 'report-by-header');
    expect(charged(done)).toBe('23000'); // 23 whole units of 1,000: never more than the provider asked
    expect(before - (await wallet())).toBe(23_000n);
    expect(JSON.stringify(done).toLowerCase()).not.toContain('settlement-overrides');
    expect(JSON.stringify(done)).not.toContain('23500');
  });

  it('finance sees it: the call\'s money and usage, journal lines with rail and units, the reconciliation, the usage export', async () => {
    const text = 'Finance reads this. '.repeat(10); // 200 characters: 2 units
    const done = await settled('summarize_text', { text }, 'metered-finance');
    const intentId = receiptOf(done)!.intentId;
    const finance = (p: string) => fetch(`${system.base}${p}`, { headers: { authorization: `Bearer ${system.demo['financeToken']}` } });
    const call = await waitFor('the settlement in the ledger', async () => {
      const c = (await (await finance(`/calls/${intentId}`)).json()) as { status: string; money: Record<string, unknown> };
      return c.status === 'settled' ? c : undefined;
    }, 10_000, 200);
    expect(call.money).toEqual({
      rail: 'wallet', held: { amountMinor: '100000', asset: 'USDC' }, charged: { amountMinor: '5000', asset: 'USDC' }, released: { amountMinor: '95000', asset: 'USDC' },
      usage: { unit: '100_chars', units: '2', unitPriceMinor: '1000', minimumMinor: '5000', flag: null },
    });
    const csv = await (await finance(`/journal.csv?intentId=${intentId}`)).text();
    const [header, ...lines] = csv.trim().split('\r\n');
    expect(header).toBe('occurred_at,recorded_at,posting_id,seq,kind,intent_id,account,asset,amount_minor,amount,rail,charge_minor,unit,units,unit_price_minor');
    expect(lines.filter((l) => l.includes(',capture,')).every((l) => l.endsWith(',wallet,5000,100_chars,2,1000'))).toBe(true);
    const report = await waitFor('the reconciliation covers the call', async () => {
      const r = (await (await finance('/reconciliation?olderThanSeconds=3600')).json()) as { meteredCalls: { checked: number; problems: unknown[] } };
      return r.meteredCalls.checked >= 9 ? r : undefined;
    }, 10_000, 300);
    expect(report.meteredCalls.problems).toEqual([]);
    const day = new Date(Date.now() - 3_600_000).toISOString();
    const events = (await (await finance(`/usage/export?from=${day}&to=${new Date(Date.now() + 60_000).toISOString()}`)).text()).trim().split('\n').map((l) => JSON.parse(l));
    const mine = events.filter((e) => e.id === intentId);
    expect(mine).toEqual([expect.objectContaining({ specversion: '1.0', type: 'io.tollgate.call.usage.v1', subject: ownerId, data: expect.objectContaining({ unit: '100_chars', value: '2', chargeMinor: '5000' }) })]);
    expect(new Set(events.map((e) => e.id)).size).toBe(events.length);
  });

  it('replay = live: the timelines, journal and balances rebuilt from the archive equal the live ones, metered facts included', async () => {
    const replay = await runOpsCli('tollgate-ops', 'tools/ops/src/tollgate-ops.ts', ['replay', '--database-url', system.pgUrl, '--verify', '--json']);
    expect(replay.code).toBe(0);
    expect(replay.out).toContain('"differences": []');
  });

  it('an x402 payment for a metered tool where no facilitator offers upto is refused and charges nothing', async () => {
    const before = await settledWallet();
    const r = await callThrough(agent, 'summarize_text', { text: 'pay me by x402' }, 'metered-x402', { 'x402/payment': { x402Version: 2, payload: {} } });
    expect(errorOf(r)).toMatchObject({ code: 'PAYMENT_NO_SETTLEABLE_CHAIN', retryable: false, message: expect.stringContaining('Pay from the prepaid balance') });
    expect(await wallet()).toBe(before);
  });

  it('a malformed metered price is refused naming the field, and nothing else changes', async () => {
    for (const [metered, field] of [[{ unit: 'Tokens', unitPriceMinor: '1', maximumMinor: '10' }, 'metered.unit'], [{ unit: 'row', unitPriceMinor: '-1', maximumMinor: '10' }, 'metered.unitPriceMinor'],
      [{ unit: 'row', unitPriceMinor: '1', minimumMinor: '20', maximumMinor: '10' }, 'metered.minimumMinor must not exceed']] as const) {
      const res = await admin('PATCH', '/admin/tools/summarize_text', { metered, summary: 'changed?' });
      expect(res.status).toBe(400);
      expect(await res.json()).toMatchObject({ code: 'LISTING_INVALID', message: expect.stringContaining(field) });
    }
    const got = (await agent.callTool({ name: 'get_tool', arguments: { name: 'summarize_text' } })) as CallToolResult;
    expect((got.structuredContent as { price: { amountMinor: string }; summary: string })).toMatchObject({ price: { amountMinor: '100000' } });
    expect((got.structuredContent as { summary: string }).summary).not.toBe('changed?');
  });
});
