/**
 * R: the service database goes away for 10 s mid-load, on a PostgreSQL server this test started itself — here in
 * embedded mode; the distributed mode's outage is part of its crash drill. Two kinds of outage: the server stops
 * (connections reset, new ones refused), and its packets are dropped by a packet filter on its port while it runs
 * (connections left half-open, as after a network failure). Every connection that listens or consumes comes back by
 * itself; readiness says the truth throughout (503 while the database is away, 200 again after); within a few
 * seconds of its return calls are as fast as before; nothing is lost and nothing is charged twice.
 */
import { readFileSync, mkdtempSync, rmSync, chmodSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Client as PgClient } from 'pg';
import { dropPackets, freePort, type OwnPostgres, type RunningProcess, startOwnPostgres, startTsProcess, waitFor } from '@tollgate/testing';
import { callThrough, connectAgent, errorOf, postJson, receiptOf } from './agent-client';

jest.setTimeout(600_000);

const PRICE = 100n;
const DEPOSIT = 1_000_000n;
const OUTAGE_MS = 10_000;

interface Mode {
  urls: { gateway: string; discovery: string; payment: string };
  /** The URLs whose /health/ready must say the truth. */
  ready: string[];
  admin: string;
  databaseUrl: string;
  stop(): Promise<void>;
}

async function embeddedMode(server: OwnPostgres): Promise<Mode> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-outage-'));
  chmodSync(dataDir, 0o755);
  const port = await freePort();
  const databaseUrl = await server.database('tollgate');
  const host: RunningProcess = startTsProcess('embedded-outage', 'apps/embedded/src/main.ts', [], {
    DEMO_MONEY: 'false', PORT: String(port), DATA_DIR: dataDir, DATABASE_URL: databaseUrl, LOG_LEVEL: 'warn', SETTLEMENT_VERIFICATION_WINDOW_MS: '200',
  });
  await host.waitForOutput(/Tollgate is running/, 150_000);
  const base = `http://127.0.0.1:${port}`;
  return {
    urls: { gateway: base, discovery: base, payment: base }, ready: [base], databaseUrl,
    admin: (JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as { adminToken: string }).adminToken,
    async stop() {
      await host.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}


const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How the database goes away and comes back, and the bounds readiness keeps: 503 after `noticedMs`, 200 within `backMs`. */
interface Outage { down(server: OwnPostgres): Promise<() => Promise<void>>; noticedMs: number; backMs: number }
const OUTAGES: [string, Outage][] = [
  ['the server stops', { down: async (server) => { await server.stop(); return () => server.start(); }, noticedMs: 1_000, backMs: 15_000 }],
  // Readiness checks are bounded (2 s) and the LISTEN connections probed (5 s + 3 s): half-open is noticed in seconds.
  ['its packets are dropped', { down: async (server) => { const drop = dropPackets(server.port); return async () => drop.restore(); }, noticedMs: 3_000, backMs: 5_000 }],
];

// The distributed mode's outage runs inside its crash drill (distributed-crash.e2e.test.ts), on its own server too.
describe.each(OUTAGES)('a 10 s database outage mid-load, embedded mode: %s', (name, outage) => {
  const startMode = embeddedMode;
  const _name = `embedded, ${name}`;
  let server: OwnPostgres;
  let mode: Mode;
  let ownerId: string;
  let credential: string;
  const clients: Client[] = [];
  const agent = async () => {
    const c = await connectAgent(`${mode.urls.gateway}/mcp/outage`, credential);
    clients.push(c);
    return c;
  };
  const readiness = async () => Promise.all(mode.ready.map(async (u) => (await fetch(`${u}/health/ready`).catch(() => undefined))?.status ?? 0));
  const timedCalls = async (c: Client, prefix: string, n: number) => {
    const ms: number[] = [];
    for (let i = 0; i < n; i++) {
      const t = performance.now();
      const r = await callThrough(c, 'reverse_text', { text: `${prefix}-${i}` }, `${prefix}-${i}`);
      expect(errorOf(r)).toBeUndefined();
      ms.push(performance.now() - t);
    }
    return ms;
  };

  beforeAll(async () => {
    server = await startOwnPostgres();
    mode = await startMode(server);
    const { gateway, discovery, payment } = mode.urls;
    ownerId = (await postJson(`${gateway}/admin/owners`, { name: 'Outage owner' }, mode.admin)).json['ownerId'] as string;
    const agentId = (await postJson(`${gateway}/admin/owners/${ownerId}/agents`, { name: 'a' }, mode.admin)).json['agentId'] as string;
    credential = (await postJson(`${gateway}/admin/agents/${agentId}/credentials`, {}, mode.admin)).json['credential'] as string;
    expect((await postJson(`${gateway}/admin/mcp-urls`, { slug: 'outage', discoveryMode: 'search' }, mode.admin)).status).toBe(201);
    const c = await agent();
    await waitFor('reverse_text in the catalog', async () => !errorOf((await c.callTool({ name: 'get_tool', arguments: { name: 'reverse_text' } })) as CallToolResult), 90_000, 300);
    await fetch(`${discovery}/admin/tools/reverse_text`, { method: 'PATCH', headers: { 'content-type': 'application/json', authorization: `Bearer ${mode.admin}` }, body: JSON.stringify({ priceMinor: PRICE.toString(), asset: 'USDC' }) });
    expect((await postJson(`${payment}/admin/owners/${ownerId}/deposits`, { reference: 'outage', amount: { amountMinor: DEPOSIT.toString(), asset: 'USDC' } }, mode.admin)).status).toBe(201);
    await waitFor('the price in the catalog', async () => ((await c.callTool({ name: 'get_tool', arguments: { name: 'reverse_text' } })) as CallToolResult).structuredContent?.['price'] !== null, 60_000, 300);
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await mode?.stop();
    await server?.destroy();
  });

  it('comes back by itself: readiness true to the facts, as fast as before within seconds, nothing lost or charged twice', async () => {
    const c = await agent();
    await timedCalls(c, 'warm', 5);
    const before = median(await timedCalls(c, 'before', 15));

    // Load from 4 agents while the database goes away and comes back; a failed call is retried later by its key.
    let loading = true;
    let next = 0;
    const keys: string[] = [];
    const load = Promise.all(Array.from({ length: 4 }, async () => {
      const a = await agent();
      while (loading) {
        const key = `load-${next++}`;
        keys.push(key);
        await callThrough(a, 'reverse_text', { text: key }, key).catch(() => undefined);
        await sleep(400);
      }
    }));
    await sleep(2_000);
    const up = await outage.down(server);
    const downSince = Date.now();
    const during: { at: number; statuses: number[] }[] = [];
    while (Date.now() - downSince < OUTAGE_MS) {
      await sleep(1_000);
      const statuses = await readiness();
      during.push({ at: Date.now() - downSince, statuses });
    }
    await up();
    const upAt = Date.now();
    // Readiness said "not ready" throughout the outage (after the time it takes to notice), never "ready".
    const noticed = during.filter((d) => d.at >= outage.noticedMs);
    expect(noticed.length).toBeGreaterThanOrEqual(3);
    expect(noticed.flatMap((d) => d.statuses).every((s) => s === 503)).toBe(true);
    await waitFor('every service ready again', async () => (await readiness()).every((s) => s === 200), 30_000, 200);
    const readyAfterMs = Date.now() - upAt;
    loading = false;
    await load;
    await sleep(3_000);
    const after = median(await timedCalls(c, 'after', 15));
    process.stdout.write(`database outage (${_name}): p50 before ${before.toFixed(1)} ms, after ${after.toFixed(1)} ms, ready ${readyAfterMs} ms after the database returned, ${keys.length} calls under load\n`);
    expect(readyAfterMs).toBeLessThan(outage.backMs);
    expect(after).toBeLessThan(before * 2 + 30);

    // Every key final, each one call; the wallet paid exactly the captured calls, none twice.
    const intents = new Set<string>();
    const codes = new Map<string, number>();
    for (const key of keys) {
      const r = await waitFor(`a final answer for ${key}`, async () => {
        const x = await callThrough(c, 'reverse_text', { text: key }, key).catch(() => undefined);
        return x && errorOf(x)?.code !== 'IDEMPOTENCY_IN_PROGRESS' ? x : undefined;
      }, 60_000, 500);
      const id = receiptOf(r)?.intentId ?? errorOf(r)?.intentId;
      if (id) intents.add(id);
      const code = errorOf(r)?.code ?? 'ok';
      codes.set(code, (codes.get(code) ?? 0) + 1);
    }
    process.stdout.write(`database outage (${_name}): answers ${JSON.stringify(Object.fromEntries(codes))}\n`);
    // A database outage is transient: nothing may have been parked for it.
    expect(codes.get('INTERNAL_SERVER_ERROR') ?? 0).toBe(0);
    const pg = new PgClient({ connectionString: mode.databaseUrl });
    await pg.connect();
    try {
      await waitFor('every hold resolved', async () => (await pg.query(`SELECT count(*)::int AS n FROM payment.hold WHERE open`)).rows[0].n === 0, 60_000, 500);
      const twice = await pg.query(`SELECT h.hold_id FROM payment.hold h WHERE (SELECT count(*) FROM payment.posting p WHERE p.posting_id IN ('capture:' || h.hold_id, 'void:' || h.hold_id)) > 1`);
      expect(twice.rows).toEqual([]);
      const captured = BigInt((await pg.query(`SELECT COALESCE(sum(captured_minor), 0)::text AS s FROM payment.hold WHERE owner_id = $1`, [ownerId])).rows[0].s);
      const [wallet] = (await pg.query(`SELECT balance::text AS b FROM payment.balance WHERE account = $1`, [`owner:${ownerId}:available`])).rows;
      expect(BigInt(wallet.b)).toBe(DEPOSIT - captured);
      const perKey = await pg.query(`SELECT c.operation_key FROM gateway.call c JOIN payment.hold h ON h.intent_id = c.intent_id
                                       WHERE h.captured_minor > 0 GROUP BY 1 HAVING count(*) > 1`);
      expect(perKey.rows).toEqual([]);
    } finally {
      await pg.end();
    }
    expect(intents.size).toBeGreaterThan(0);
  });
});
