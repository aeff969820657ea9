/**
 * Chaos (B4, "a crash at any step loses no event and charges no one
 * twice"): 200 paid calls while the payment and settlement processes are
 * killed with SIGKILL at random moments and restarted. Afterwards every hold
 * is resolved exactly once, no call is both settled and refunded, each
 * service's postings sum to zero, the clearing account between them nets to
 * zero, and the owner's wallet reconciles to the minor unit.
 */
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client as PgClient } from 'pg';
import { type DistributedSystem, startDistributedSystem, waitFor } from '@tollgate/testing';
import { callThrough, connectAgent, errorOf, postJson, receiptOf } from './agent-client';

jest.setTimeout(600_000);

const SERVICES = ['gateway', 'discovery', 'execution', 'payment', 'settlement', 'ledger', 'sample-providers'] as const;
const CALLS = 200;
const WORKERS = 8;
const PRICE = 500n;
const DEPOSIT = 150_000n;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const between = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo));

describe('chaos: kill -9 of payment and settlement during 200 paid calls', () => {
  let system: DistributedSystem;
  let pg: PgClient;
  const clients: Client[] = [];
  let ownerId: string;

  beforeAll(async () => {
    system = await startDistributedSystem(SERVICES, {
      SETTLEMENT_VERIFICATION_WINDOW_MS: '300', SETTLEMENT_SWEEP_INTERVAL_MS: '100', OUTBOX_POLL_INTERVAL_MS: '500',
      GATEWAY_CALL_WAIT_MS: '3000', GATEWAY_CALL_DEADLINE_MS: '30000',
    });
    const token = system.adminToken;
    const gw = system.url('gateway');
    pg = new PgClient({ connectionString: system.db.url });
    await pg.connect();
    expect((await postJson(`${gw}/admin/mcp-urls`, { slug: 'chaos', discoveryMode: 'search' }, token)).status).toBe(201);
    expect((await postJson(`${system.url('discovery')}/admin/providers`, { providerId: 'catalog-demo', endpoint: `${system.url('sample-providers')}/providers/catalog-demo/mcp` }, token)).json['ok']).toBe(true);
    ownerId = (await postJson(`${gw}/admin/owners`, { name: 'Chaos owner' }, token)).json['ownerId'] as string;
    for (let i = 0; i < 4; i++) {
      const a = await postJson(`${gw}/admin/owners/${ownerId}/agents`, { name: `Chaos agent ${i}` }, token);
      const cred = await postJson(`${gw}/admin/agents/${a.json['agentId']}/credentials`, {}, token);
      clients.push(await connectAgent(`${gw}/mcp/chaos`, cred.json['credential'] as string));
    }
    expect((await postJson(`${system.url('payment')}/admin/owners/${ownerId}/deposits`, { reference: 'chaos-bank-1', amount: { amountMinor: DEPOSIT.toString(), asset: 'USDC' } }, token)).status).toBe(201);
    await waitFor('convert_currency in the gateway', async () => !errorOf((await clients[0]!.callTool({ name: 'get_tool', arguments: { name: 'convert_currency' } })) as CallToolResult), 90_000, 300);
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await pg?.end();
    await system?.stop();
  });

  it('resolves every hold exactly once, and the books still balance', async () => {
    const args = (i: number) => ({ amount: String(1000 + i), from: 'EUR', to: 'USD' });
    const key = (i: number) => `chaos-${i}`;
    const call = (i: number) => callThrough(clients[i % clients.length]!, 'convert_currency', args(i), key(i));

    // The chaos: alternately kill payment or settlement at a random moment, keep it down a random while, restart it.
    let calling = true;
    const kills: string[] = [];
    const chaos = (async () => {
      let victim: 'payment' | 'settlement' = Math.random() < 0.5 ? 'payment' : 'settlement';
      // At least two kills of each, whatever the machine's speed; more while calls are still being made.
      while (calling || kills.length < 4) {
        await sleep(between(800, 3000));
        const p = [...system.processes].reverse().find((x) => x.name === victim)!;
        await p.stop('SIGKILL');
        kills.push(victim);
        await sleep(between(200, 1500));
        system.start(victim);
        await waitFor(`${victim} back`, async () => (await fetch(`${system.url(victim)}/health/ready`).catch(() => undefined))?.status === 200, 120_000, 200);
        victim = victim === 'payment' ? 'settlement' : 'payment';
      }
    })();

    // 200 paid calls from 8 workers; a call still running when the gateway stops waiting is retried with its key later.
    let next = 0;
    const firstAnswers: CallToolResult[] = [];
    await Promise.all(Array.from({ length: WORKERS }, async () => {
      while (next < CALLS) {
        const i = next++;
        firstAnswers[i] = await call(i);
      }
    }));
    calling = false;
    await chaos;
    process.stdout.write(`chaos: ${kills.length} kills during ${CALLS} calls (${kills.join(', ')})\n`);
    expect(kills.filter((k) => k === 'payment').length).toBeGreaterThanOrEqual(2);
    expect(kills.filter((k) => k === 'settlement').length).toBeGreaterThanOrEqual(2);
    for (const r of firstAnswers) expect([undefined, 'IDEMPOTENCY_IN_PROGRESS']).toContain(errorOf(r)?.code);

    // The agent's side: replay each key until its receipt is final. Every call was paid for and served.
    const finals = await Promise.all(Array.from({ length: CALLS }, (_, i) => waitFor(`final receipt of call ${i}`, async () => {
      const r = await call(i);
      const s = receiptOf(r)?.status;
      return s === 'SETTLED' || s === 'REFUNDED' ? r : undefined;
    }, 240_000, 1000)));
    expect(finals.every((r) => receiptOf(r)!.status === 'SETTLED')).toBe(true);

    // Every hold resolved, exactly once, by one posting.
    const holds = await pg.query(`SELECT life ? 'settled' AS captured, open, count(*)::int AS n FROM payment.hold GROUP BY 1, 2`);
    expect(holds.rows).toEqual([{ captured: true, open: false, n: CALLS }]);
    const resolvedTwice = await pg.query(`
      SELECT h.hold_id FROM payment.hold h
       WHERE (SELECT count(*) FROM payment.posting p WHERE p.posting_id IN ('capture:' || h.hold_id, 'void:' || h.hold_id)) <> 1
          OR (SELECT count(*) FROM settlement.posting p WHERE p.posting_id = 'settle:' || h.hold_id) <> 1`);
    expect(resolvedTwice.rows).toEqual([]);
    // One CallSettled per call, never a CallRefunded beside it (the outbox keeps every event settlement ever wrote).
    const outcomes = await pg.query(`
      SELECT envelope->'payload'->>'intentId' AS intent, count(*) FILTER (WHERE envelope->>'type' = 'CallSettled')::int AS settled,
             count(*) FILTER (WHERE envelope->>'type' = 'CallRefunded')::int AS refunded
        FROM settlement.outbox_event GROUP BY 1`);
    expect(outcomes.rows).toHaveLength(CALLS);
    for (const o of outcomes.rows) expect(o).toMatchObject({ settled: 1, refunded: 0 });

    // Each service's postings sum to zero; balances equal their entries; the clearing account nets to zero across the two.
    for (const schema of ['payment', 'settlement']) {
      const sums = await pg.query(`SELECT asset, sum(amount)::text AS s FROM ${schema}.entry GROUP BY asset`);
      expect(sums.rows).toEqual([{ asset: 'USDC', s: '0' }]);
      const drift = await pg.query(`
        SELECT b.account FROM ${schema}.balance b
          LEFT JOIN (SELECT account, asset, sum(amount) AS s FROM ${schema}.entry GROUP BY account, asset) e USING (account, asset)
         WHERE b.balance <> COALESCE(e.s, 0)`);
      expect(drift.rows).toEqual([]);
    }
    const clearing = await pg.query(`
      SELECT (SELECT COALESCE(sum(balance), 0) FROM payment.balance WHERE account = 'platform:clearing')
           + (SELECT COALESCE(sum(balance), 0) FROM settlement.balance WHERE account = 'platform:clearing') AS net`);
    expect(clearing.rows[0].net).toBe('0');

    // The owner's wallet to the minor unit: what is left is the deposit less every captured price.
    const wallet = await pg.query(`SELECT account, balance::text FROM payment.balance WHERE account LIKE $1 ORDER BY account`, [`owner:${ownerId}:%`]);
    expect(wallet.rows).toEqual([
      { account: `owner:${ownerId}:available`, balance: (DEPOSIT - PRICE * BigInt(CALLS)).toString() },
      { account: `owner:${ownerId}:held`, balance: '0' },
    ]);
    const provider = await pg.query(`SELECT account, balance::text FROM settlement.balance WHERE account <> 'platform:clearing' ORDER BY account`);
    expect(provider.rows).toEqual([
      { account: 'platform:revenue', balance: ((PRICE * BigInt(CALLS)) / 10n).toString() },
      { account: 'provider:catalog-demo:payable', balance: ((PRICE * BigInt(CALLS) * 9n) / 10n).toString() },
    ]);
    // The finance projection, rebuilt from the events alone, equals the two services' books account by account.
    const books = (await pg.query(`
      SELECT account, sum(balance)::text AS balance FROM (SELECT account, balance FROM payment.balance UNION ALL SELECT account, balance FROM settlement.balance) x
       GROUP BY account HAVING sum(balance) <> 0 ORDER BY account`)).rows as { account: string; balance: string }[];
    await waitFor('the ledger journal equal to the books', async () => {
      const b = (await (await fetch(`${system.url('ledger')}/balances`, { headers: { authorization: `Bearer ${system.adminToken}` } })).json()) as { accounts: { account: string; balance: string }[]; totals: { sum: string }[] };
      const journal = b.accounts.filter((a) => a.balance !== '0').map((a) => ({ account: a.account, balance: a.balance }));
      return b.totals.every((t) => t.sum === '0') && JSON.stringify(journal) === JSON.stringify(books);
    }, 60_000, 500);
  });
});
