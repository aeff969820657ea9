/**
 * G5.3, G5.4, B — paying by MPP beside x402, against the embedded host and the sandbox payment method's backend in
 * its own process. The agents are the MCP SDK clients of both eras wrapped by mppx's own MCP client, in their own
 * process: a PAYMENT_REQUIRED carries MPP's challenge in `_meta["org.paymentauth/payment-required"]`, mppx pays it and
 * retries, and the answer carries the receipt in `_meta["org.paymentauth/receipt"]`. A fixed price is a `charge`, a
 * metered tool an `authorize` captured for the charge after the effect. A credential is used once (two at once: one
 * wins), a replay buys nothing twice, an expired, foreign-realm or forged credential and one sent beside an x402
 * payment are refused and charge nothing, the `Payment-Authorization` header works as `_meta`, and the backend dying
 * after the charge, before it answers, still credits exactly once — its own record decides.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { freePort, type RunningProcess, startTestMppSandbox, startTsProcess, type TestMppSandbox, waitFor } from '@tollgate/testing';
import { postJson, runOpsCli } from './agent-client';

jest.setTimeout(300_000);

const SECRET = 'mpp-e2e-secret-key-0123456789abcdef0123';
const SANDBOX_TOKEN = 'mpp-sandbox-token-0123456789';
const PROVIDERS_TOKEN = 'mpp-providers-token-0123456789';
const PRICE = 100n;
type Result = { isError?: boolean; content?: { text?: string }[]; _meta?: Record<string, unknown>; receipt?: Record<string, unknown>; thrown?: string; code?: number; data?: Record<string, unknown> };

describe('MPP payments (embedded)', () => {
  let dataDir: string;
  let sandbox: TestMppSandbox;
  let providers: RunningProcess;
  let host: RunningProcess;
  let pg: PgClient;
  let base: string;
  let admin: string;

  /** The gateway's error: in the tool result (G7), or beside MPP's data in a JSON-RPC -32043 (a refused credential). */
  const errorOf = (r: Result) => (r._meta?.['assay/error'] ?? r.data?.['assay/error']) as { code: string; details?: Record<string, unknown> } | undefined;
  const receiptOf = (r: Result) => r._meta?.['assay/receipt'] as { intentId: string; status: string; held: { amountMinor: string }; charged: { amountMinor: string } } | undefined;
  /** A new owner with no prepaid wallet and one agent; its payer token at the sandbox holds `funds`. */
  const newAgent = async (funds = 10_000n) => {
    const ownerId = (await postJson(`${base}/admin/owners`, { name: 'mpp payer' }, admin)).json['ownerId'] as string;
    const agentId = (await postJson(`${base}/admin/owners/${ownerId}/agents`, { name: 'a' }, admin)).json['agentId'] as string;
    const bearer = (await postJson(`${base}/admin/agents/${agentId}/credentials`, {}, admin)).json['credential'] as string;
    return { ownerId, bearer, token: await sandbox.wallet(funds) };
  };
  /** Runs the agent process with these steps; its results, in order. */
  const agent = async (a: { bearer: string; token: string }, steps: Record<string, unknown>[], era: 'classic' | 'modern' = 'classic') => {
    const p = startTsProcess('mpp-agent', 'apps/system-e2e/src/mpp-agent.ts', [JSON.stringify({ url: `${base}/mcp/mpp`, bearer: a.bearer, era, token: a.token, steps })]);
    const code = await new Promise<number | null>((resolve) => p.child.once('exit', resolve));
    const line = p.output().split('\n').find((l) => l.includes('{"results"'));
    if (code !== 0 || !line) throw new Error(`mpp agent failed (${code}): ${p.output().slice(-2000)}`);
    return (JSON.parse(line.slice(line.indexOf('{"results"'))) as { results: Result[] }).results;
  };
  const charges = async (token: string) => Object.entries((await sandbox.state()).payments).filter(([, p]) => p.token === token);
  const balance = async (token: string) => BigInt((await sandbox.state()).balances[token] ?? '0');
  const startHost = async () => {
    host = startTsProcess('embedded-mpp', 'apps/embedded/src/main.ts', [], {
      DEMO_MONEY: 'false', PORT: base.split(':')[2]!, EMBEDDED_PG_PORT: String(pgPort), DATA_DIR: dataDir, LOG_LEVEL: 'warn', SETTLEMENT_VERIFICATION_WINDOW_MS: '300',
      PAYMENT_MPP_SANDBOX: sandbox.url, PAYMENT_MPP_SECRET_KEY: SECRET, PAYMENT_MPP_SANDBOX_TOKEN: SANDBOX_TOKEN, PAYMENT_X402_FACILITATOR_TIMEOUT_MS: '3000',
      UPSTREAM_CREDENTIALS: `${providersUrl}=${PROVIDERS_TOKEN}`,
    }, { ownGroup: true });
    await host.waitForOutput(/Tollgate is running/, 150_000);
  };
  let pgPort = 0;
  let providersUrl = '';

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-mpp-'));
    chmodSync(dataDir, 0o755); // the embedded engine runs PostgreSQL as its own user
    sandbox = await startTestMppSandbox({ stateFile: path.join(dataDir, 'mpp-sandbox.json'), token: SANDBOX_TOKEN });
    const providersPort = await freePort();
    providersUrl = `http://127.0.0.1:${providersPort}`;
    providers = startTsProcess('sample-providers', 'apps/sample-providers/src/main.ts', [], { PORT: String(providersPort), SAMPLE_PROVIDERS_TOKEN: PROVIDERS_TOKEN });
    await providers.waitForOutput(/listening/, 120_000);
    base = `http://127.0.0.1:${await freePort()}`;
    pgPort = await freePort();
    await startHost();
    admin = (JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as { adminToken: string }).adminToken;
    pg = new PgClient({ connectionString: `postgres://postgres:postgres@127.0.0.1:${pgPort}/tollgate` });
    pg.on('error', () => undefined);
    await pg.connect();
    expect((await postJson(`${base}/admin/mcp-urls`, { slug: 'mpp', discoveryMode: 'search' }, admin)).status).toBe(201);
    expect((await postJson(`${base}/admin/providers`, { providerId: 'metered-fixtures', endpoint: `${providersUrl}/providers/metered-fixtures/mcp` }, admin)).status).toBe(201);
    await fetch(`${base}/admin/tools/reverse_text`, { method: 'PATCH', headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` }, body: JSON.stringify({ priceMinor: PRICE.toString(), asset: 'USDC' }) });
    await waitFor('both tools priced in the catalog', async () => {
      const rows = (await pg.query(`SELECT count(*)::int AS n FROM gateway.catalog_tool WHERE name IN ('reverse_text', 'report_usage')`).catch(() => ({ rows: [{ n: 0 }] }))).rows[0] as { n: number };
      return rows.n === 2 || undefined;
    }, 60_000, 300);
  });

  afterAll(async () => {
    await pg?.end().catch(() => undefined);
    await host?.killGroup('SIGKILL').catch(() => undefined);
    await sandbox?.stop().catch(() => undefined);
    await providers?.stop().catch(() => undefined);
    rmSync(dataDir, { recursive: true, force: true });
  });

  it.each(['classic', 'modern'] as const)('%s client: mppx pays the challenge, the answer carries the receipt; a replay buys nothing twice', async (era) => {
    const a = await newAgent();
    const [paid, again] = await agent(a, [
      { kind: 'pay', tool: 'reverse_text', args: { text: `mpp ${era}` }, key: `mpp-${era}` },
      { kind: 'pay', tool: 'reverse_text', args: { text: `mpp ${era}` }, key: `mpp-${era}` },
    ], era);
    expect(errorOf(paid!)).toBeUndefined();
    expect(paid!.content?.[0]?.text).toBe([...`mpp ${era}`].reverse().join(''));
    expect(receiptOf(paid!)).toMatchObject({ held: { amountMinor: PRICE.toString() } });
    expect(paid!._meta?.['org.paymentauth/receipt']).toMatchObject({ method: 'tollgate-sandbox', status: 'success', intent: 'charge', challengeId: expect.any(String) });
    expect(receiptOf(again!)?.intentId).toBe(receiptOf(paid!)!.intentId);
    expect((await charges(a.token)).map(([, p]) => ({ kind: p.kind, amount: p.amount }))).toEqual([{ kind: 'charge', amount: PRICE.toString() }]);
    expect(await balance(a.token)).toBe(10_000n - PRICE);
    const deposits = (await pg.query(`SELECT source, amount_minor FROM payment.deposit WHERE owner_id = $1`, [a.ownerId])).rows;
    expect(deposits).toEqual([{ source: 'mpp', amount_minor: PRICE.toString() }]);
  });

  it('a credential is used once: two calls at once with the same one, exactly one is paid', async () => {
    const a = await newAgent();
    const [asked] = await agent(a, [{ kind: 'credential', tool: 'reverse_text', args: { text: 'once' }, key: 'once-ask' }]);
    const credential = (asked as unknown as { credential: string }).credential;
    const runs = await Promise.all(['once-1', 'once-2'].map((key) => agent(a, [{ kind: 'send', tool: 'reverse_text', args: { text: 'once' }, key, credential }])));
    const outcomes = runs.map(([r]) => errorOf(r!)?.details?.['reason'] ?? 'paid').sort();
    expect(outcomes).toEqual(['credential_already_used', 'paid']);
    expect(await charges(a.token)).toHaveLength(1);
  });

  it('refuses an expired, a foreign-realm and a forged credential, and one beside an x402 payment — charging nothing', async () => {
    const a = await newAgent();
    const future = new Date(Date.now() + 60_000).toISOString();
    const minted = await agent(a, [
      { kind: 'mint', secretKey: SECRET, realm: 'tollgate', expires: new Date(Date.now() - 1_000).toISOString(), amount: PRICE.toString(), currency: 'USDC' },
      { kind: 'mint', secretKey: SECRET, realm: 'elsewhere', expires: future, amount: PRICE.toString(), currency: 'USDC' },
      { kind: 'mint', secretKey: 'another-secret-key-0123456789abcdef012', realm: 'tollgate', expires: future, amount: PRICE.toString(), currency: 'USDC' },
    ]);
    const sends = minted.map((m, i) => ({ kind: 'send', tool: 'reverse_text', args: { text: 'bad' }, key: `bad-${i}`, credential: (m as unknown as { credential: string }).credential }));
    const [asked] = await agent(a, [{ kind: 'credential', tool: 'reverse_text', args: { text: 'both' }, key: 'both-ask' }]);
    const both = { kind: 'send', tool: 'reverse_text', args: { text: 'both' }, key: 'both', credential: (asked as unknown as { credential: string }).credential, meta: { 'x402/payment': { x402Version: 2 } } };
    const results = await agent(a, [...sends, both]);
    for (const r of results) expect(errorOf(r)).toMatchObject({ code: 'PAYMENT_REQUIRED' });
    expect(results.map((r) => errorOf(r)?.details?.['reason'])).toEqual(['payment-expired', 'invalid-challenge', 'invalid-challenge', 'one_payment_per_call']);
    // A refused credential is MPP's -32043 with a fresh challenge to pay (the binding); two payments at once stay a tool result.
    expect(results.map((r) => r.code ?? 'tool result')).toEqual([-32043, -32043, -32043, 'tool result']);
    expect(results[0]!.data).toMatchObject({ httpStatus: 402, challenges: [expect.objectContaining({ method: 'tollgate-sandbox' })] });
    expect(results[3]!._meta?.['org.paymentauth/payment-required']).toBeUndefined();
    expect(await charges(a.token)).toEqual([]);
  });

  it('the Payment-Authorization header carries the credential as _meta does (OAuth keeps Authorization)', async () => {
    const a = await newAgent();
    const [asked] = await agent(a, [{ kind: 'credential', tool: 'reverse_text', args: { text: 'header' }, key: 'header' }]);
    const [paid] = await agent(a, [{ kind: 'send', via: 'header', tool: 'reverse_text', args: { text: 'header' }, key: 'header', credential: (asked as unknown as { credential: string }).credential }]);
    expect(errorOf(paid!)).toBeUndefined();
    expect(await charges(a.token)).toHaveLength(1);
  });

  it('a metered tool: the maximum authorized, the charge captured after the effect, the rest never taken', async () => {
    const a = await newAgent(1_000_000n);
    const [paid] = await agent(a, [{ kind: 'pay', tool: 'report_usage', args: { text: 'm', usage: { units: 13 } }, key: 'metered' }]);
    expect(errorOf(paid!)).toBeUndefined();
    expect(receiptOf(paid!)).toMatchObject({ held: { amountMinor: '100000' } });
    expect(paid!._meta?.['org.paymentauth/receipt']).toMatchObject({ intent: 'authorize' });
    const [reference, payment] = await waitFor('the capture', async () => {
      const [c] = await charges(a.token);
      return c && c[1].captured !== undefined ? c : undefined;
    }, 30_000, 300);
    expect(payment).toMatchObject({ kind: 'authorize', amount: '100000', captured: '13000' });
    expect(await balance(a.token)).toBe(1_000_000n - 13_000n);
    expect(reference).toBe((paid!._meta?.['org.paymentauth/receipt'] as { challengeId: string }).challengeId);
    expect((await pg.query(`SELECT balance::text AS b FROM payment.balance WHERE account = $1`, [`owner:${a.ownerId}:available`])).rows[0]?.b ?? '0').toBe('0');
  });

  it('the backend dies after charging, before answering: its own record decides, credited exactly once', async () => {
    const a = await newAgent();
    await sandbox.fault('die-after-payment', 1);
    const pending = agent(a, [{ kind: 'pay', tool: 'reverse_text', args: { text: 'crash' }, key: 'crash' }]);
    await waitFor('the backend died after the charge', async () => (sandbox.process.child.exitCode !== null || sandbox.process.child.signalCode !== null) || undefined, 60_000, 100);
    await sandbox.restart();
    const [paid] = await pending;
    const final = errorOf(paid!)?.code === 'IDEMPOTENCY_IN_PROGRESS'
      ? (await waitFor('a final answer', async () => {
        const [r] = await agent(a, [{ kind: 'pay', tool: 'reverse_text', args: { text: 'crash' }, key: 'crash' }]);
        return errorOf(r!)?.code === 'IDEMPOTENCY_IN_PROGRESS' ? undefined : r;
      }, 60_000, 500))
      : paid!;
    expect(errorOf(final!)).toBeUndefined();
    expect(await charges(a.token)).toHaveLength(1);
    const deposits = (await pg.query(`SELECT amount_minor FROM payment.deposit WHERE owner_id = $1`, [a.ownerId])).rows;
    expect(deposits).toEqual([{ amount_minor: PRICE.toString() }]);
  });

  it('the host killed -9 between a metered result and its capture: captured exactly once after the restart', async () => {
    const a = await newAgent(1_000_000n);
    const [paid] = await agent(a, [{ kind: 'pay', tool: 'report_usage', args: { text: 'k', usage: { units: 21 } }, key: 'host-crash' }]);
    expect(receiptOf(paid!)).toMatchObject({ status: 'VERIFYING', held: { amountMinor: '100000' } });
    await host.killGroup('SIGKILL');
    await pg.end().catch(() => undefined);
    await startHost();
    pg = new PgClient({ connectionString: `postgres://postgres:postgres@127.0.0.1:${pgPort}/tollgate` });
    pg.on('error', () => undefined);
    await pg.connect();
    const [, payment] = await waitFor('the capture after the restart', async () => {
      const [c] = await charges(a.token);
      return c && c[1].captured !== undefined ? c : undefined;
    }, 60_000, 300);
    expect(payment).toMatchObject({ kind: 'authorize', captured: '21000' });
    expect(await balance(a.token)).toBe(1_000_000n - 21_000n);
    expect(await charges(a.token)).toHaveLength(1);
  });

  it('replay = live: the journal and balances rebuilt from the archive equal the live ones, MPP payments included', async () => {
    const replay = await runOpsCli('tollgate-ops', 'tools/ops/src/tollgate-ops.ts', ['replay', '--database-url', `postgres://postgres:postgres@127.0.0.1:${pgPort}/tollgate`, '--verify', '--json']);
    expect(replay.code).toBe(0);
    expect(replay.out).toContain('"differences": []');
  });
});
