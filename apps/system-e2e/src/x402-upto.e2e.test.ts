/**
 * G5.3, G5.4, B — a metered tool paid by x402 `upto`, against the embedded host, a stand-in facilitator and its chain in
 * their own process (`@x402/evm`'s upto facilitator scheme on a simulated Permit2), and the real SDK clients of both
 * eras signing with `@x402/evm`'s upto client. The payer signs the maximum; the hold is placed once the facilitator
 * verified it; the charge (what the provider reported, by the metering rule) is collected on chain only after the
 * effect is confirmed, through the facilitator the payer signed to; the rest is never collected. A replay buys
 * nothing twice, a charge of 0 puts nothing on chain, a facilitator that refuses partial settles leaves a clear state
 * for ops and never charges the payer, and a facilitator dying mid-settle or the host killed (-9) between the result
 * and the collection collects the charge exactly once, as the chain shows.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client as PgClient } from 'pg';
import { freePort, type RunningProcess, startTestFacilitator, startTsProcess, type TestFacilitator, testPayer, waitFor } from '@tollgate/testing';
import { type AgentClient, callThrough, connectAgent, connectModernAgent, errorOf, postJson, receiptOf, runOpsCli } from './agent-client';

jest.setTimeout(300_000);

const PAY_TO = '0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c';
const FACILITATOR_TOKEN = 'facilitator-upto-token-0123456789';
const PROVIDERS_TOKEN = 'upto-providers-token-0123456789';
const NETWORK = 'eip155:84532';
const MAX = 100_000n;
const FUNDS = 1_000_000n;

describe('x402 upto for a metered tool (embedded)', () => {
  let dataDir: string;
  let facilitator: TestFacilitator;
  let providers: RunningProcess;
  let host: RunningProcess;
  let pg: PgClient;
  let base: string;
  let admin: string;
  const ports = { http: 0, pg: 0 };
  const clients: { close(): Promise<void> }[] = [];

  const startHost = async () => {
    host = startTsProcess('embedded-upto', 'apps/embedded/src/main.ts', [], {
      DEMO_MONEY: 'false', PORT: String(ports.http), EMBEDDED_PG_PORT: String(ports.pg), DATA_DIR: dataDir, LOG_LEVEL: 'warn', SETTLEMENT_VERIFICATION_WINDOW_MS: '300',
      PAYMENT_X402_FACILITATOR: facilitator.url, PAYMENT_X402_FACILITATOR_TOKEN: FACILITATOR_TOKEN, PAYMENT_X402_NETWORK: NETWORK, PAYMENT_X402_PAY_TO: PAY_TO,
      PAYMENT_X402_FACILITATOR_TIMEOUT_MS: '3000', PAYMENT_X402_CHAIN_RPC: facilitator.rpcUrl, UPSTREAM_CREDENTIALS: `${providersUrl}=${PROVIDERS_TOKEN}`,
    }, { ownGroup: true });
    await host.waitForOutput(/Tollgate is running/, 150_000);
  };
  let providersUrl = '';
  /** A new owner with no prepaid wallet, one agent on the `upto` URL. */
  const newAgent = async (era: 'classic' | 'modern' = 'classic') => {
    const ownerId = (await postJson(`${base}/admin/owners`, { name: 'upto payer' }, admin)).json['ownerId'] as string;
    const agentId = (await postJson(`${base}/admin/owners/${ownerId}/agents`, { name: 'a' }, admin)).json['agentId'] as string;
    const credential = (await postJson(`${base}/admin/agents/${agentId}/credentials`, {}, admin)).json['credential'] as string;
    const client = era === 'modern' ? await connectModernAgent(`${base}/mcp/upto`, credential) : await connectAgent(`${base}/mcp/upto`, credential);
    clients.push(client);
    return { ownerId, client };
  };
  const report = (c: AgentClient, key: string, units: number, meta: Record<string, unknown> = {}) =>
    callThrough(c, 'report_usage', { text: key, usage: { units } }, key, meta);
  /** The requirement the gateway asks for, and a funded payer's upto payment for it. */
  const signed = async (c: AgentClient, key: string) => {
    const asked = await report(c, `${key}-ask`, 1);
    expect(errorOf(asked)).toMatchObject({ code: 'PAYMENT_REQUIRED' });
    const req = (asked._meta?.['x402/paymentRequired'] as { accepts: Parameters<ReturnType<typeof testPayer>['signUpto']>[0][] }).accepts[0]!;
    const payer = testPayer();
    await facilitator.fund(payer.address, FUNDS);
    return { req, payer, payment: await payer.signUpto(req) };
  };
  const settledAnswer = (c: AgentClient, key: string, units: number, meta: Record<string, unknown>) => waitFor(`${key} settled`, async () => {
    const r = await report(c, key, units, meta);
    return receiptOf(r)?.status === 'SETTLED' ? r : undefined;
  }, 30_000, 300);
  const attempt = async (intentId: string) =>
    (await pg.query(`SELECT life FROM payment.x402_attempt WHERE intent_id = $1`, [intentId])).rows[0]?.life as { step: string; chargeMinor?: string; transaction?: string; refusal?: string } | undefined;
  const ended = (intentId: string, steps: string[]) => waitFor(`the upto attempt of ${intentId} ended`, async () => {
    const life = await attempt(intentId);
    return life && steps.includes(life.step) ? life : undefined;
  }, 60_000, 300);
  const balance = async (account: string) => BigInt((await pg.query(`SELECT balance::text AS b FROM payment.balance WHERE account = $1 AND asset = 'USDC'`, [account])).rows[0]?.b ?? '0');
  const connectPg = async () => {
    pg = new PgClient({ connectionString: `postgres://postgres:postgres@127.0.0.1:${ports.pg}/tollgate` });
    pg.on('error', () => undefined); // the host's PostgreSQL goes down with it in the crash drill
    await pg.connect();
  };
  const chainBalance = async (address: string) => BigInt((await facilitator.state()).balances[address.toLowerCase()] ?? '0');

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-upto-'));
    chmodSync(dataDir, 0o755); // the embedded engine runs PostgreSQL as its own user
    facilitator = await startTestFacilitator({ stateFile: path.join(dataDir, 'facilitator-state.json'), token: FACILITATOR_TOKEN, network: NETWORK });
    const providersPort = await freePort();
    providersUrl = `http://127.0.0.1:${providersPort}`;
    providers = startTsProcess('sample-providers', 'apps/sample-providers/src/main.ts', [], { PORT: String(providersPort), SAMPLE_PROVIDERS_TOKEN: PROVIDERS_TOKEN });
    await providers.waitForOutput(/listening/, 120_000);
    [ports.http, ports.pg] = [await freePort(), await freePort()];
    base = `http://127.0.0.1:${ports.http}`;
    await startHost();
    admin = (JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as { adminToken: string }).adminToken;
    await connectPg();
    expect((await postJson(`${base}/admin/mcp-urls`, { slug: 'upto', discoveryMode: 'search' }, admin)).status).toBe(201);
    expect((await postJson(`${base}/admin/providers`, { providerId: 'metered-fixtures', endpoint: `${providersUrl}/providers/metered-fixtures/mcp` }, admin)).status).toBe(201);
    const probe = await newAgent();
    await waitFor('report_usage in the catalog', async () => !errorOf((await probe.client.callTool({ name: 'get_tool', arguments: { name: 'report_usage' } })) as CallToolResult), 60_000, 300);
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await pg?.end().catch(() => undefined);
    await host?.killGroup('SIGKILL').catch(() => undefined);
    await facilitator?.stop().catch(() => undefined);
    await providers?.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('asks for upto (not exact): the maximum, Permit2, and the facilitator the payer must sign to', async () => {
    const { client } = await newAgent();
    const { req } = await signed(client, 'offer');
    const supported = (await (await fetch(`${facilitator.url}/supported`, { headers: { authorization: `Bearer ${FACILITATOR_TOKEN}` } })).json()) as { kinds: { scheme: string; extra?: { facilitatorAddress: string } }[] };
    const address = supported.kinds.find((k) => k.scheme === 'upto')!.extra!.facilitatorAddress;
    expect(req).toMatchObject({ scheme: 'upto', network: NETWORK, amount: MAX.toString(), payTo: PAY_TO, extra: { assetTransferMethod: 'permit2', facilitatorAddress: address } });
  });

  it.each(['classic', 'modern'] as const)('%s client: holds the maximum, collects the charge after the effect, once, and replays', async (era) => {
    const { ownerId, client } = await newAgent(era);
    const { payer, payment } = await signed(client, `paid-${era}`);
    const paid = await report(client, `paid-${era}`, 13, { 'x402/payment': payment });
    expect(errorOf(paid)).toBeUndefined();
    expect(receiptOf(paid)).toMatchObject({ held: { amountMinor: MAX.toString() } });
    expect(paid._meta?.['x402/payment-response']).toMatchObject({ success: true, scheme: 'upto', authorized: MAX.toString(), transaction: '' });
    // Nothing moved on chain before the effect was confirmed.
    const done = await settledAnswer(client, `paid-${era}`, 13, { 'x402/payment': payment });
    expect(receiptOf(done)).toMatchObject({ charged: { amountMinor: '13000' } });
    const intentId = receiptOf(paid)!.intentId;
    const life = await ended(intentId, ['collected', 'uncollected']);
    expect(life).toMatchObject({ step: 'collected', chargeMinor: '13000' });
    const transfers = await facilitator.transfersFrom(payer.address);
    expect(transfers.map((t) => ({ kind: t.kind, value: t.value, to: t.to.toLowerCase(), transaction: t.transaction }))).toEqual([{ kind: 'permit2', value: '13000', to: PAY_TO, transaction: life!.transaction }]);
    expect(await chainBalance(payer.address)).toBe(FUNDS - 13_000n);
    // The owner's books: the authorization credited, the unused rest reversed; nothing left held or available.
    expect(await balance(`owner:${ownerId}:available`)).toBe(0n);
    expect(await balance(`owner:${ownerId}:held`)).toBe(0n);
    const again = await report(client, `paid-${era}`, 13, { 'x402/payment': payment });
    expect(receiptOf(again)?.intentId).toBe(intentId);
    expect(await facilitator.transfersFrom(payer.address)).toHaveLength(1);
  });

  it('a facilitator that refuses partial settles: the call ends uncollected for ops, the payer is charged nothing on chain', async () => {
    const { ownerId, client } = await newAgent();
    const { payer, payment } = await signed(client, 'partial');
    await facilitator.fault({ kind: 'refuse-partial' }, 1);
    const paid = await report(client, 'partial', 7, { 'x402/payment': payment });
    expect(errorOf(paid)).toBeUndefined();
    await settledAnswer(client, 'partial', 7, { 'x402/payment': payment });
    const life = await ended(receiptOf(paid)!.intentId, ['collected', 'uncollected']);
    expect(life).toMatchObject({ step: 'uncollected', chargeMinor: '7000', refusal: 'invalid_upto_evm_partial_settlement_unsupported' });
    expect(await facilitator.transfersFrom(payer.address)).toEqual([]);
    expect(await chainBalance(payer.address)).toBe(FUNDS);
    // The charge the provider earned is the owner's debt, shown to ops.
    expect(await balance(`owner:${ownerId}:debt`)).toBe(-7_000n);
    const listed = (await (await fetch(`${base}/admin/x402/attempts`, { headers: { authorization: `Bearer ${admin}` } })).json()) as { attempts: { intentId: string; state: string }[] };
    expect(listed.attempts).toContainEqual(expect.objectContaining({ intentId: receiptOf(paid)!.intentId, state: 'uncollected' }));
  });

  it('the facilitator dies after the transfer, the host is killed -9 mid-way: the charge is collected exactly once', async () => {
    const { client } = await newAgent();
    const { payer, payment } = await signed(client, 'crash');
    await facilitator.fault({ kind: 'die-after-transfer' }, 1);
    const paid = await report(client, 'crash', 21, { 'x402/payment': payment });
    expect(errorOf(paid)).toBeUndefined();
    const intentId = receiptOf(paid)!.intentId;
    // The result is recorded; kill the host before the charge is collected, then bring it back: the collection runs,
    // the facilitator moves the money and dies before answering (unknown), and comes back with its chain.
    await host.killGroup('SIGKILL');
    await pg.end().catch(() => undefined);
    await startHost();
    await connectPg();
    await waitFor('the facilitator died after the transfer', async () => (facilitator.process.child.exitCode !== null || facilitator.process.child.signalCode !== null) || undefined, 60_000, 100);
    await facilitator.restart();
    const life = await ended(intentId, ['collected', 'uncollected']);
    expect(life).toMatchObject({ step: 'collected', chargeMinor: '21000' });
    const transfers = await facilitator.transfersFrom(payer.address);
    expect(transfers.map((t) => t.value)).toEqual(['21000']);
    expect(await chainBalance(payer.address)).toBe(FUNDS - 21_000n);
  });

  it('the charge goes only to the facilitator the permit names: another one configured meanwhile is never asked', async () => {
    const { client } = await newAgent();
    const { payer, payment } = await signed(client, 'switched');
    const named = (payment.payload as unknown as { permit2Authorization: { witness: { facilitator: string } } }).permit2Authorization.witness.facilitator;
    const paid = await report(client, 'switched', 9, { 'x402/payment': payment });
    expect(errorOf(paid)).toBeUndefined();
    const intentId = receiptOf(paid)!.intentId;
    // Before the charge is collected, the operator switches to a facilitator with another signer and restarts.
    await host.killGroup('SIGKILL');
    await pg.end().catch(() => undefined);
    await facilitator.restart({ address: '0x00000000000000000000000000000000000b0b00' });
    await startHost();
    await connectPg();
    const stuck = await waitFor('the collection held back', async () => {
      const life = (await pg.query(`SELECT life FROM payment.x402_attempt WHERE intent_id = $1`, [intentId])).rows[0]?.life as { step: string; problem?: string } | undefined;
      return life?.step === 'collecting' && life.problem?.includes('names facilitator') ? life : undefined;
    }, 60_000, 300);
    expect(stuck.problem).toContain(named.toLowerCase());
    expect(await facilitator.transfersFrom(payer.address)).toEqual([]);
    // The facilitator the payer signed to comes back: the charge is collected through it, once.
    await host.killGroup('SIGKILL');
    await pg.end().catch(() => undefined);
    await facilitator.restart({ address: named });
    await startHost();
    await connectPg();
    expect(await ended(intentId, ['collected', 'uncollected'])).toMatchObject({ step: 'collected', chargeMinor: '9000' });
    expect((await facilitator.transfersFrom(payer.address)).map((t) => t.value)).toEqual(['9000']);
  });

  it('a charge of 0 collects nothing on chain', async () => {
    const res = await fetch(`${base}/admin/tools/report_usage`, {
      method: 'PATCH', headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` },
      body: JSON.stringify({ metered: { unit: '100_chars', unitPriceMinor: '1000', maximumMinor: MAX.toString() } }),
    });
    expect(res.status).toBe(200);
    const { client } = await newAgent();
    await waitFor('the price without a minimum', async () => {
      const got = (await client.callTool({ name: 'get_tool', arguments: { name: 'report_usage' } })) as CallToolResult;
      return (got.structuredContent as { price: { metered?: { minimumMinor?: string } } }).price.metered?.minimumMinor === undefined || undefined;
    }, 30_000, 300);
    const { payer, payment } = await signed(client, 'zero');
    const paid = await report(client, 'zero', 0, { 'x402/payment': payment });
    expect(errorOf(paid)).toBeUndefined();
    const done = await settledAnswer(client, 'zero', 0, { 'x402/payment': payment });
    expect(receiptOf(done)).toMatchObject({ charged: { amountMinor: '0' } });
    expect(await ended(receiptOf(paid)!.intentId, ['collected', 'uncollected'])).toMatchObject({ step: 'collected', chargeMinor: '0' });
    expect(await facilitator.transfersFrom(payer.address)).toEqual([]);
  });

  it('replay = live: the journal and balances rebuilt from the archive equal the live ones, upto authorizations and reversals included', async () => {
    const replay = await runOpsCli('tollgate-ops', 'tools/ops/src/tollgate-ops.ts', ['replay', '--database-url', `postgres://postgres:postgres@127.0.0.1:${ports.pg}/tollgate`, '--verify', '--json']);
    expect(replay.code).toBe(0);
    expect(replay.out).toContain('"differences": []');
  });
});
