/**
 * Two instances of every service on one Kafka and one PostgreSQL serve paid calls correctly. The
 * gateways' fallback re-read is switched off in effect (every 10 minutes) and they wait up to 30 s: a request waiting
 * in replica A whose outcome replica B consumed is answered only because B's commit wakes A (NOTIFY). Every call is
 * answered (none IDEMPOTENCY_IN_PROGRESS); afterwards one hold per call, each resolved once,
 * books balanced, the ledger has every call.
 */
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client as PgClient } from 'pg';
import { type AppName, type DistributedSystem, startDistributedSystem, waitFor } from '@tollgate/testing';
import { callThrough, connectAgent, errorOf, postJson, receiptOf } from './agent-client';

jest.setTimeout(400_000);

const APPS: AppName[] = ['gateway', 'execution', 'payment', 'settlement', 'ledger'];
const NAMES = [...APPS, ...APPS.map((a) => `${a}-b`), 'discovery', 'sample-providers'];
const CALLS_PER_GATEWAY = 30;

describe('replicas: two instances of every service', () => {
  let system: DistributedSystem;
  let pg: PgClient;
  const clients: Client[] = [];
  let ownerId: string;

  beforeAll(async () => {
    system = await startDistributedSystem(NAMES, {
      GATEWAY_CALL_WAIT_MS: '30000', GATEWAY_CALL_RECHECK_MS: '600000', GATEWAY_CALL_DEADLINE_MS: '20000', SETTLEMENT_VERIFICATION_WINDOW_MS: '200', SETTLEMENT_SWEEP_INTERVAL_MS: '100',
    }, (n) => n.replace(/-b$/, '') as AppName);
    const token = system.adminToken;
    const gw = system.url('gateway');
    pg = new PgClient({ connectionString: system.db.url });
    await pg.connect();
    ownerId = (await postJson(`${gw}/admin/owners`, { name: 'Replicas owner' }, token)).json['ownerId'] as string;
    expect((await postJson(`${gw}/admin/mcp-urls`, { slug: 'replicas', discoveryMode: 'search' }, token)).status).toBe(201);
    const providers = `${system.url('sample-providers')}/providers`;
    // Registration syncs the provider at once; with twelve processes starting, the first sync may still time out — it
    // is idempotent, so it is retried (seen once in a full run; the body is in the error if it never succeeds).
    await waitFor('text-tools registered and synced', async () => {
      const r = await postJson(`${system.url('discovery')}/admin/providers`, { providerId: 'text-tools', endpoint: `${providers}/text-tools/mcp` }, token);
      if (r.json['ok'] !== true) throw new Error(JSON.stringify(r.json));
      return true;
    }, 60_000, 1000);
    for (const g of ['gateway', 'gateway-b']) {
      const a = await postJson(`${gw}/admin/owners/${ownerId}/agents`, { name: `agent via ${g}` }, token);
      const cred = (await postJson(`${gw}/admin/agents/${a.json['agentId']}/credentials`, {}, token)).json['credential'] as string;
      clients.push(await connectAgent(`${system.url(g)}/mcp/replicas`, cred));
    }
    await waitFor('word_count in both gateways', async () => {
      const r = await Promise.all(clients.map((c) => c.callTool({ name: 'get_tool', arguments: { name: 'word_count' } }) as Promise<CallToolResult>));
      return r.every((x) => !errorOf(x));
    }, 90_000, 500);
    const priced = await fetch(`${system.url('discovery')}/admin/tools/word_count`, {
      method: 'PATCH', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ priceMinor: '100', asset: 'USDC', freeCallsPerDay: 0 }),
    });
    expect(priced.status).toBe(200);
    expect((await postJson(`${system.url('payment-b')}/admin/owners/${ownerId}/deposits`, { reference: 'replicas', amount: { amountMinor: '1000000', asset: 'USDC' } }, token)).status).toBe(201);
    await waitFor('paid word_count in both gateways', async () => {
      const r = await Promise.all(clients.map((c) => c.callTool({ name: 'get_tool', arguments: { name: 'word_count' } }) as Promise<CallToolResult>));
      return r.every((x) => (x.structuredContent as { price: { amountMinor?: string } | null }).price?.amountMinor === '100');
    }, 60_000, 500);
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await pg?.end();
    await system?.stop();
  });

  it('answers every call through either gateway, woken across replicas within 1.5 s; holds once per call and balances the books', async () => {
    const took: number[] = [];
    const answers = await Promise.all(clients.flatMap((c, g) => Array.from({ length: CALLS_PER_GATEWAY }, async (_, i) => {
      // A little spread, so calls overlap across both gateways and both instances of every consumer.
      await new Promise((r) => setTimeout(r, i * 40));
      return callThrough(c, 'word_count', { text: `replica ${g} call ${i}` }, `replica-${g}-${i}`);
    })));
    // Answered promptly. One call at a time through each gateway (the burst above is bound by this
    // machine's throughput, not by wake-ups): each within 1.5 s, though the gateways re-read only every 10 minutes —
    // about half the outcomes are recorded by the other replica, so only the cross-replica wake-up answers that fast.
    for (const [g, c] of clients.entries()) {
      for (let i = 0; i < 10; i++) {
        const started = performance.now();
        const a = await callThrough(c, 'word_count', { text: `prompt ${g} ${i}` }, `prompt-${g}-${i}`);
        took.push(performance.now() - started);
        expect(errorOf(a)).toBeUndefined();
        answers.push(a);
      }
    }
    process.stdout.write(`replicas: one at a time, slowest answer ${Math.max(...took).toFixed(0)} ms, median ${[...took].sort((a, b) => a - b)[Math.floor(took.length / 2)]!.toFixed(0)} ms\n`);
    expect(Math.max(...took)).toBeLessThan(1_500);
    // Without the cross-replica wake-up about half the calls would sit out the 30 s wait and answer IDEMPOTENCY_IN_PROGRESS.
    for (const a of answers) {
      expect(errorOf(a)).toBeUndefined();
      // Held while VERIFYING, charged once SETTLED (an answer may come after the short verification window closed).
      const r = receiptOf(a) as unknown as { status: string; held: { amountMinor: string }; charged: { amountMinor: string } };
      expect(r.status === 'SETTLED' ? r.charged.amountMinor : r.held.amountMinor).toBe('100');
    }
    const intents = answers.map((a) => receiptOf(a)!.intentId);
    expect(new Set(intents).size).toBe(2 * CALLS_PER_GATEWAY + 20);

    const q = async <T>(sql: string, params: unknown[] = []) => (await pg.query(sql, params)).rows as T[];
    await waitFor('every hold resolved', async () =>
      (await q<{ n: number }>("SELECT count(*)::int AS n FROM payment.hold WHERE intent_id = ANY($1) AND open", [intents]))[0]!.n === 0, 60_000, 500);
    const holds = await q<{ intent_id: string; n: number }>('SELECT intent_id, count(*)::int AS n FROM payment.hold WHERE intent_id = ANY($1) GROUP BY intent_id', [intents]);
    expect(holds).toHaveLength(intents.length);
    expect(holds.every((h) => h.n === 1)).toBe(true);
    // Each service's books balance; the ledger projected every call exactly once.
    for (const schema of ['payment', 'settlement']) {
      const [sum] = await q<{ s: string }>(`SELECT coalesce(sum(amount), 0)::text AS s FROM "${schema}".entry`);
      expect(sum!.s).toBe('0');
    }
    await waitFor('ledger has every call', async () =>
      (await q<{ n: number }>("SELECT count(DISTINCT intent_id)::int AS n FROM ledger.timeline_entry WHERE intent_id = ANY($1) AND type = 'HoldReleased'", [intents]))[0]!.n === intents.length, 60_000, 500);
    const [dup] = await q<{ n: number }>('SELECT count(*)::int AS n FROM (SELECT event_id FROM ledger.timeline_entry GROUP BY event_id HAVING count(*) > 1) d');
    expect(dup!.n).toBe(0);
    const [wallet] = await q<{ b: string }>(`SELECT balance::text AS b FROM payment.balance WHERE account = $1 AND asset = 'USDC'`, [`owner:${ownerId}:available`]);
    expect(BigInt(wallet!.b)).toBe(1_000_000n - 100n * BigInt(intents.length));
  });
});
