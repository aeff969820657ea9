/**
 * B (x402 that cannot lose or mint money), against a facilitator and its chain in their own process (the facilitator
 * refuses a reused nonce and an unfunded payer, can answer late or die mid-settle; the chain answers Ethereum JSON-RPC),
 * with the embedded host speaking to both over HTTP. Verify and settle run outside any consumer transaction; the
 * verdict of every settle comes from the chain, so a lost answer, a "nonce already used" to our own repeat, or a chain
 * that cannot be read never credits or refuses on a claim — across the facilitator's death and a kill -9 of the host
 * mid-settle. Run twice: with a facilitator that does not deduplicate by payment identifier (as real ones do not) and
 * with one that does. At the end the chain and the books agree transfer by transfer.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as PgClient } from 'pg';
import { freePort, type RunningProcess, startTestFacilitator, startTsProcess, type TestFacilitator, testPayer, waitFor } from '@tollgate/testing';
import { type AgentClient, callThrough, connectAgent, connectModernAgent, errorOf, postJson, receiptOf } from './agent-client';

jest.setTimeout(420_000);

const PRICE = 100n;
const PAY_TO = '0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c';
const FACILITATOR_TOKEN = 'facilitator-test-token-0123456789';
const NETWORK = 'eip155:84532';

describe.each([
  ['a facilitator that does not deduplicate (answers a repeat "nonce already used")', false],
  ['a facilitator that deduplicates by payment identifier', true],
])('x402 with %s', (_kind, dedupes) => {
  let dataDir: string;
  let facilitator: TestFacilitator;
  let host: RunningProcess;
  let pg: PgClient;
  const ports = { http: 0, pg: 0 };
  let base: string;
  let admin: string;
  const clients: Client[] = [];

  const startHost = async () => {
    host = startTsProcess('embedded-x402', 'apps/embedded/src/main.ts', [], {
      DEMO_MONEY: 'false', PORT: String(ports.http), EMBEDDED_PG_PORT: String(ports.pg), DATA_DIR: dataDir, LOG_LEVEL: 'warn', SETTLEMENT_VERIFICATION_WINDOW_MS: '200',
      PAYMENT_X402_FACILITATOR: facilitator.url, PAYMENT_X402_FACILITATOR_TOKEN: FACILITATOR_TOKEN, PAYMENT_X402_NETWORK: NETWORK, PAYMENT_X402_PAY_TO: PAY_TO,
      PAYMENT_X402_FACILITATOR_TIMEOUT_MS: '3000', PAYMENT_X402_CHAIN_RPC: facilitator.rpcUrl,
    }, { ownGroup: true });
    await host.waitForOutput(/Tollgate is running/, 150_000);
  };
  /** A new owner with no prepaid wallet, one agent on the `x402` URL. */
  const newAgent = async () => {
    const ownerId = (await postJson(`${base}/admin/owners`, { name: 'x402 payer' }, admin)).json['ownerId'] as string;
    const agentId = (await postJson(`${base}/admin/owners/${ownerId}/agents`, { name: 'a' }, admin)).json['agentId'] as string;
    const credential = (await postJson(`${base}/admin/agents/${agentId}/credentials`, {}, admin)).json['credential'] as string;
    const client = await connectAgent(`${base}/mcp/x402`, credential);
    clients.push(client);
    return { ownerId, credential, client };
  };
  const reverse = (c: AgentClient, key: string, meta: Record<string, unknown> = {}) => callThrough(c, 'reverse_text', { text: key }, key, meta);
  /** The requirement the gateway asks the agent to sign (PAYMENT_REQUIRED), then a signed payment of a funded payer. */
  const signedPayment = async (c: AgentClient, key: string, fund = PRICE * 10n) => {
    const asked = await reverse(c, `${key}-ask`);
    expect(errorOf(asked)).toMatchObject({ code: 'PAYMENT_REQUIRED' });
    const req = (asked._meta?.['x402/paymentRequired'] as { accepts: Parameters<ReturnType<typeof testPayer>['sign']>[0][] }).accepts[0]!;
    expect(req).toMatchObject({ network: NETWORK, payTo: PAY_TO, amount: PRICE.toString() });
    const payer = testPayer();
    if (fund > 0n) await facilitator.fund(payer.address, fund);
    return { payer, payment: await payer.sign(req) };
  };
  const x402Deposits = async (ownerId: string) =>
    (await pg.query(`SELECT reference, amount_minor FROM payment.deposit WHERE owner_id = $1 AND source = 'x402'`, [ownerId])).rows as { reference: string; amount_minor: string }[];
  const walletTotal = async (ownerId: string) => {
    const w = (await (await fetch(`${base}/admin/owners/${ownerId}/wallet`, { headers: { authorization: `Bearer ${admin}` } })).json()) as { balances: { asset: string; available: string; held: string }[] };
    const b = w.balances.find((x) => x.asset === 'USDC');
    return b ? BigInt(b.available) + BigInt(b.held) : 0n;
  };
  /** The agent's side: repeat with the same key until the answer is final. */
  const finalAnswer = (c: () => Client, key: string, meta: Record<string, unknown>) => waitFor(`a final answer for ${key}`, async () => {
    const r = await reverse(c(), key, meta).catch(() => undefined);
    return r && errorOf(r)?.code !== 'IDEMPOTENCY_IN_PROGRESS' ? r : undefined;
  }, 120_000, 500);

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-x402-'));
    chmodSync(dataDir, 0o755); // the embedded engine runs PostgreSQL as its own user
    facilitator = await startTestFacilitator({ stateFile: path.join(dataDir, 'facilitator-state.json'), token: FACILITATOR_TOKEN, network: NETWORK, dedupes });
    ports.http = await freePort();
    ports.pg = await freePort();
    base = `http://127.0.0.1:${ports.http}`;
    await startHost();
    admin = (JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as { adminToken: string }).adminToken;
    pg = new PgClient({ connectionString: `postgres://postgres:postgres@127.0.0.1:${ports.pg}/tollgate` });
    pg.on('error', () => undefined); // the host's PostgreSQL goes down with it in the crash drill
    await pg.connect();
    expect((await postJson(`${base}/admin/mcp-urls`, { slug: 'x402', discoveryMode: 'search' }, admin)).status).toBe(201);
    await fetch(`${base}/admin/tools/reverse_text`, { method: 'PATCH', headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` }, body: JSON.stringify({ priceMinor: PRICE.toString(), asset: 'USDC' }) });
    const probe = await newAgent();
    await waitFor('the price in the catalog', async () => {
      const r = (await probe.client.callTool({ name: 'get_tool', arguments: { name: 'reverse_text' } })) as CallToolResult;
      return !errorOf(r) && (r.structuredContent as { price: unknown }).price !== null;
    }, 60_000, 300);
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await pg?.end().catch(() => undefined);
    await host?.killGroup('SIGKILL').catch(() => undefined);
    await facilitator?.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('pays a call: verified and settled by the facilitator with its credential, credited once, the nonce refused when reused', async () => {
    const a = await newAgent();
    const { payer, payment } = await signedPayment(a.client, 'ok');
    const paid = await reverse(a.client, 'ok', { 'x402/payment': payment });
    expect(errorOf(paid)).toBeUndefined();
    const [transfer] = await facilitator.transfersFrom(payer.address);
    expect(paid._meta?.['x402/payment-response']).toMatchObject({ success: true, network: NETWORK, transaction: transfer!.transaction });
    expect(receiptOf(paid)).toMatchObject({ held: { amountMinor: PRICE.toString() } });
    expect({ ...transfer, to: transfer!.to.toLowerCase() }).toMatchObject({ to: PAY_TO, value: PRICE.toString(), paymentId: expect.stringMatching(/^tollgate_[0-9a-f]{32}$/) });
    expect(await x402Deposits(a.ownerId)).toEqual([{ reference: `x402:${NETWORK}:${transfer!.nonce.toLowerCase()}`, amount_minor: PRICE.toString() }]);

    const reused = await reverse(a.client, 'ok-again', { 'x402/payment': payment });
    expect(errorOf(reused)).toMatchObject({ code: 'PAYMENT_REQUIRED', details: { reason: 'nonce_already_used' } });
    expect(await facilitator.transfersFrom(payer.address)).toHaveLength(1);
  });

  it('2026-07-28: the same exchange — PAYMENT_REQUIRED with _meta["x402/paymentRequired"], the retry pays under the same key, charged once', async () => {
    const a = await newAgent();
    const modern = await connectModernAgent(`${base}/mcp/x402`, a.credential);
    try {
      expect(modern.getProtocolEra()).toBe('modern');
      const { payer, payment } = await signedPayment(modern, 'modern');
      const paid = await reverse(modern, 'modern', { 'x402/payment': payment });
      expect(errorOf(paid)).toBeUndefined();
      expect(receiptOf(paid)).toMatchObject({ held: { amountMinor: PRICE.toString() } });
      const again = await reverse(modern, 'modern', { 'x402/payment': payment });
      expect(receiptOf(again)?.intentId).toBe(receiptOf(paid)!.intentId);
      expect(await facilitator.transfersFrom(payer.address)).toHaveLength(1);
      expect(await x402Deposits(a.ownerId)).toHaveLength(1);
    } finally {
      await modern.close();
    }
  });

  it('a payer the chain cannot debit is refused by the facilitator: nothing moves, nothing is credited', async () => {
    const a = await newAgent();
    const { payer, payment } = await signedPayment(a.client, 'broke', 0n);
    const r = await reverse(a.client, 'broke', { 'x402/payment': payment });
    expect(errorOf(r)).toMatchObject({ code: 'PAYMENT_REQUIRED', retryable: true, details: { reason: 'insufficient_funds' } });
    expect(await facilitator.transfersFrom(payer.address)).toHaveLength(0);
    expect(await x402Deposits(a.ownerId)).toEqual([]);
  });

  it('a settle answered after the timeout: the chain shows the transfer, credited once in the chain\'s transaction', async () => {
    const a = await newAgent();
    const { payer, payment } = await signedPayment(a.client, 'late');
    await facilitator.fault({ kind: 'delay', delayMs: 6_000 });
    const paid = await reverse(a.client, 'late', { 'x402/payment': payment });
    expect(errorOf(paid)).toBeUndefined();
    const transfers = await facilitator.transfersFrom(payer.address);
    expect(transfers).toHaveLength(1);
    expect(paid._meta?.['x402/payment-response']).toMatchObject({ success: true, transaction: transfers[0]!.transaction });
    expect(await x402Deposits(a.ownerId)).toHaveLength(1);
    const [attempt] = (await pg.query(`SELECT a.life->>'step' AS state, a.life->>'transaction' AS transaction FROM payment.x402_attempt a JOIN payment.hold h USING (intent_id) WHERE h.owner_id = $1`, [a.ownerId])).rows;
    expect(attempt).toEqual({ state: 'settled', transaction: transfers[0]!.transaction });
  });

  it('a lost answer while the chain cannot be read: nothing credited or refused, shown to ops, credited once the chain answers', async () => {
    const a = await newAgent();
    const { payer, payment } = await signedPayment(a.client, 'dark');
    await facilitator.fault({ kind: 'delay', delayMs: 6_000 });
    await facilitator.fault({ kind: 'rpc-down' }, 1_000_000);
    const call = reverse(a.client, 'dark', { 'x402/payment': payment });
    await waitFor('the transfer on the chain', async () => (await facilitator.transfersFrom(payer.address)).length === 1, 30_000, 50);
    const listed = await waitFor('the attempt shown to ops as unknown', async () => {
      const r = (await (await fetch(`${base}/admin/x402/attempts`, { headers: { authorization: `Bearer ${admin}` } })).json()) as { attempts: { payer: string; unknownSince: string | null; lastProblem: string | null }[] };
      return r.attempts.find((x) => x.payer === payer.address.toLowerCase() && x.unknownSince !== null && /chain/.test(x.lastProblem ?? ''));
    }, 30_000, 250);
    expect(listed.lastProblem).toMatch(/^chain: /);
    expect(await x402Deposits(a.ownerId)).toEqual([]);
    await facilitator.fault({ kind: 'none' });
    await call.catch(() => undefined);
    await waitFor('credited once the chain answers', async () => (await x402Deposits(a.ownerId)).length === 1, 60_000, 250);
    expect(await facilitator.transfersFrom(payer.address)).toHaveLength(1);
    expect(await x402Deposits(a.ownerId)).toHaveLength(1);
  });

  it('a refusal gives the nonce back: the same authorization pays once the payer is funded', async () => {
    const a = await newAgent();
    const { payer, payment } = await signedPayment(a.client, 'unfunded', 0n);
    const refused = await reverse(a.client, 'unfunded', { 'x402/payment': payment });
    expect(errorOf(refused)).toMatchObject({ code: 'PAYMENT_REQUIRED', details: { reason: 'insufficient_funds' } });
    await facilitator.fund(payer.address, PRICE);
    const paid = await reverse(a.client, 'unfunded-then-funded', { 'x402/payment': payment });
    expect(errorOf(paid)).toBeUndefined();
    expect(await facilitator.transfersFrom(payer.address)).toHaveLength(1);
    expect(await x402Deposits(a.ownerId)).toHaveLength(1);
  });

  it('an authorization the payer cancelled on the chain is refused, and its nonce stays spent', async () => {
    const a = await newAgent();
    const { payer, payment } = await signedPayment(a.client, 'cancelled');
    await facilitator.cancel(payer.address, payment.payload.authorization.nonce, payment.accepted.asset);
    const r = await reverse(a.client, 'cancelled', { 'x402/payment': payment });
    expect(errorOf(r)).toMatchObject({ code: 'PAYMENT_REQUIRED', details: { reason: 'authorization_cancelled' } });
    expect(await x402Deposits(a.ownerId)).toEqual([]);
    const again = await reverse(a.client, 'cancelled-again', { 'x402/payment': payment });
    expect(errorOf(again)).toMatchObject({ code: 'PAYMENT_REQUIRED', details: { reason: 'nonce_already_used' } });
  });

  it.each(['die-after-transfer', 'die-before-transfer'] as const)('the facilitator dies mid-settle (%s) and comes back: one transfer, one credit', async (kind) => {
    const a = await newAgent();
    const { payer, payment } = await signedPayment(a.client, kind);
    await facilitator.fault({ kind });
    const call = reverse(a.client, kind, { 'x402/payment': payment });
    await waitFor('the facilitator died', async () => facilitator.process.child.exitCode !== null || facilitator.process.child.signalCode !== null, 30_000, 50);
    expect(await x402Deposits(a.ownerId)).toEqual([]);
    await facilitator.restart();
    const paid = await call;
    expect(errorOf(paid)).toBeUndefined();
    expect(await facilitator.transfersFrom(payer.address)).toHaveLength(1);
    expect(await x402Deposits(a.ownerId)).toHaveLength(1);
  });

  it('kill -9 of the host mid-settle: after the restart the settlement is asked again and credited exactly once', async () => {
    let a = await newAgent();
    const { payer, payment } = await signedPayment(a.client, 'host-crash');
    await facilitator.fault({ kind: 'delay', delayMs: 2_500 });
    void reverse(a.client, 'host-crash', { 'x402/payment': payment }).catch(() => undefined);
    // The transfer is done on the chain and the host is waiting for the facilitator's answer: the crash lands now.
    await waitFor('the transfer on the chain', async () => (await facilitator.transfersFrom(payer.address)).length === 1, 30_000, 20);
    await host.killGroup('SIGKILL');
    await pg.end().catch(() => undefined);
    await startHost();
    pg = new PgClient({ connectionString: `postgres://postgres:postgres@127.0.0.1:${ports.pg}/tollgate` });
    pg.on('error', () => undefined); // the host's PostgreSQL goes down with it in the crash drill
    await pg.connect();
    a = { ...a, client: await connectAgent(`${base}/mcp/x402`, a.credential) };
    clients.push(a.client);
    await waitFor('the settlement found and credited', async () => (await x402Deposits(a.ownerId)).length === 1, 90_000, 250);
    const answer = await finalAnswer(() => a.client, 'host-crash', { 'x402/payment': payment });
    expect(errorOf(answer)?.code).not.toBe('IDEMPOTENCY_IN_PROGRESS');
    expect(await facilitator.transfersFrom(payer.address)).toHaveLength(1);
    // Whatever became of the call (served, or refunded after its deadline), the money the chain moved is the owner's.
    await waitFor('nothing held for the call', async () => (await pg.query(`SELECT count(*)::int AS n FROM payment.hold WHERE owner_id = $1 AND open`, [a.ownerId])).rows[0].n === 0, 30_000, 250);
    const charged = (await pg.query(`SELECT COALESCE(sum(captured_minor), 0)::text AS n FROM payment.hold WHERE owner_id = $1`, [a.ownerId])).rows[0].n as string;
    expect(await walletTotal(a.ownerId) + BigInt(charged)).toBe(PRICE);
  });

  it('the chain and the books agree transfer by transfer: never debited without the credit, never credited without the debit', async () => {
    const chain = (await facilitator.state()).transfers.filter((t) => t.kind !== 'cancel' && t.to.toLowerCase() === PAY_TO);
    const books = (await pg.query(`SELECT reference, amount_minor FROM payment.deposit WHERE source = 'x402' ORDER BY reference`)).rows as { reference: string; amount_minor: string }[];
    expect(chain.length).toBeGreaterThanOrEqual(7);
    expect(books).toEqual(chain.map((t) => ({ reference: `x402:${NETWORK}:${t.nonce.toLowerCase()}`, amount_minor: t.value })).sort((x, y) => x.reference.localeCompare(y.reference)));
    const open = (await pg.query(`SELECT count(*)::int AS n FROM payment.x402_attempt WHERE open`)).rows[0].n;
    expect(open).toBe(0);
  });
});
