/**
 * The embedded mode crashed in the middle of 40 concurrent paid writing calls — its whole
 * process group (Node and the embedded PostgreSQL) killed with SIGKILL, or stopped with SIGTERM — then started again on
 * the same data dir. Every key retried: no effect performed twice, every key ends with its result or an explicit
 * unknown-outcome answer, every call the gateway answered for is in the ledger, every hold captured or released, and
 * the wallet equals the deposit minus what the settled calls cost.
 *
 * Every other call asks for the provider's progress, so the crash also cuts progress streams (notices, not facts: they
 * are only checked to have arrived in order; the calls behind them are held to the same rules as the others).
 *
 * The provider is a separate process (sample-providers), so it outlives the crash and counts every creation request.
 */
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { Client as PgClient } from 'pg';
import { freePort, type RunningProcess, startTsProcess, waitFor } from '@tollgate/testing';
import { callThrough, connectAgent, errorOf, postJson, receiptOf } from './agent-client';

jest.setTimeout(400_000);

const CALLS = 40;
const PROVIDERS_TOKEN = 'crash-drill-providers-token';
const PRICE = 100n;
const DEPOSIT = 1_000_000n;
/** Answers that end a retry loop: the result, or a definitive statement about an unknown outcome. */
const UNKNOWN_OUTCOME = new Set(['IDEMPOTENCY_RESULT_UNAVAILABLE', 'IDEMPOTENCY_ATTEMPT_STALLED']);

interface Tickets { tickets: { operationKey: string }[]; inFlight: number; received: Record<string, number> }

describe.each(['SIGKILL', 'SIGTERM'] as const)('embedded mode survives %s of its process group mid-load', (signal) => {
  let dataDir: string;
  let providers: RunningProcess;
  let providersUrl: string;
  let embedded: RunningProcess;
  const ports = { http: 0, pg: 0, providers: 0 };
  let admin: string;
  let base: string;
  let ownerId: string;
  let credential: string;
  const clients: Client[] = [];

  const startEmbedded = async () => {
    embedded = startTsProcess(`embedded-${signal}`, 'apps/embedded/src/main.ts', [], { DEMO_MONEY: 'false',
      PORT: String(ports.http), EMBEDDED_PG_PORT: String(ports.pg), DATA_DIR: dataDir, SETTLEMENT_VERIFICATION_WINDOW_MS: '200',
      // Calls cut off by the crash are found and reconciled within seconds, not the default 30 s deadline + 5 s grace.
      GATEWAY_CALL_DEADLINE_MS: '8000', EXECUTION_STALL_GRACE_MS: '1000', EXECUTION_RECONCILE_INTERVAL_MS: '500',
      UPSTREAM_CREDENTIALS: `http://127.0.0.1:${ports.providers}=${PROVIDERS_TOKEN}`,
    }, { ownGroup: true });
    await embedded.waitForOutput(/Tollgate is running/, 150_000);
    admin = (JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as { adminToken: string }).adminToken;
  };
  const agent = async () => {
    const c = await connectAgent(`${base}/mcp/crash`, credential);
    clients.push(c);
    return c;
  };
  /** What each progress-asking call heard before its answer (or the crash). */
  const heard = new Map<number, number[]>();
  // Every other call asks for the provider's progress: the crash lands in the middle of progress streams too.
  const create = (c: Client, i: number) => callThrough(c, 'create_review_ticket', { source_id: `doc-${i}`, title: `Review ${i}` }, `crash-${signal}-${i}`, {},
    i % 2 === 1 ? { onprogress: (p) => heard.set(i, [...(heard.get(i) ?? []), p.progress]) } : undefined);
  const tickets = async () => (await (await fetch(`${providersUrl}/review-tickets/tickets`, { headers: { authorization: `Bearer ${PROVIDERS_TOKEN}` } })).json()) as Tickets;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-crash-'));
    chmodSync(dataDir, 0o755); // the embedded engine runs PostgreSQL as its own user
    ports.http = await freePort();
    ports.pg = await freePort();
    ports.providers = await freePort();
    base = `http://127.0.0.1:${ports.http}`;
    providers = startTsProcess('sample-providers', 'apps/sample-providers/src/main.ts', [], { PORT: String(ports.providers), SAMPLE_PROVIDERS_TOKEN: PROVIDERS_TOKEN });
    providersUrl = `http://127.0.0.1:${ports.providers}/providers`;
    await waitFor('sample providers up', async () => (await fetch(`${providersUrl}/review-tickets/tickets`, { headers: { authorization: `Bearer ${PROVIDERS_TOKEN}` } }).catch(() => undefined))?.status === 200, 120_000, 250);
    await startEmbedded();

    const owner = await postJson(`${base}/admin/owners`, { name: 'Crash owner' }, admin);
    ownerId = owner.json['ownerId'] as string;
    const a = await postJson(`${base}/admin/owners/${ownerId}/agents`, { name: 'Crash agent' }, admin);
    credential = (await postJson(`${base}/admin/agents/${a.json['agentId']}/credentials`, {}, admin)).json['credential'] as string;
    expect((await postJson(`${base}/admin/mcp-urls`, { slug: 'crash', discoveryMode: 'search' }, admin)).status).toBe(201);
    expect((await postJson(`${base}/admin/providers`, { providerId: 'review-tickets', endpoint: `${providersUrl}/review-tickets/mcp` }, admin)).json['ok']).toBe(true);
    const priced = await fetch(`${base}/admin/tools/create_review_ticket`, {
      method: 'PATCH', headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` }, body: JSON.stringify({ priceMinor: PRICE.toString(), asset: 'USDC' }),
    });
    expect(priced.status).toBe(200);
    expect((await postJson(`${base}/admin/owners/${ownerId}/deposits`, { reference: `crash-${signal}`, amount: { amountMinor: DEPOSIT.toString(), asset: 'USDC' } }, admin)).status).toBe(201);
    const c = await agent();
    await waitFor('the paid writing tool in the catalog', async () => {
      const r = (await c.callTool({ name: 'get_tool', arguments: { name: 'create_review_ticket' } })) as CallToolResult;
      return !errorOf(r) && (r.structuredContent as { price: unknown }).price !== null;
    }, 60_000, 300);
    // Slow creations: the crash lands while calls are dispatched, held, or waiting for the provider.
    await postJson(`${providersUrl}/review-tickets/faults`, { delayMs: 400 }, PROVIDERS_TOKEN);
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await embedded?.killGroup('SIGKILL').catch(() => undefined);
    await providers?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it(`loses nothing and charges nothing twice across the ${signal} and the restart`, async () => {
    const before = await Promise.all(Array.from({ length: 4 }, () => agent()));
    const inFlight = Array.from({ length: CALLS }, (_, i) => create(before[i % before.length]!, i).catch(() => undefined));
    await waitFor('creations reaching the provider, progress heard', async () => (await tickets()).inFlight + (await tickets()).tickets.length >= 5 && heard.size > 0, 30_000, 20);
    const stopStarted = Date.now();
    const code = await embedded.killGroup(signal);
    if (signal === 'SIGTERM') {
      expect(code).toBe(0); // an orderly stop: requests refused, in-flight events finished, PostgreSQL stopped last
      // Requests waiting for their outcome are answered at once ("still running", retry with the same key): they do not
      // hold the stop for their 35 s wait (it took ~100 s when they did, PostgreSQL refusing their reads meanwhile).
      if (Date.now() - stopStarted > 15_000) process.stdout.write(`\nSTOP OUTPUT:\n${embedded.output().slice(-12000)}\n`);
      expect(Date.now() - stopStarted).toBeLessThan(15_000);
    }
    const answeredBefore = (await Promise.all(inFlight)).filter((r): r is CallToolResult => !!r && !!receiptOf(r)).map((r) => receiptOf(r)!.intentId);

    await startEmbedded();
    await postJson(`${providersUrl}/review-tickets/faults`, { delayMs: 0 }, PROVIDERS_TOKEN);
    const after = await agent();
    // Retry every key with the same operation key until its answer is final: the result, or a definitive refusal. An
    // unknown outcome is an answer too, but a provisional one: the reconciler reads the ticket back by its key and the
    // replay then carries the verdict — so keys are retried until that happens.
    const finals = new Map<number, CallToolResult>();
    for (let i = 0; i < CALLS; i++) {
      finals.set(i, await waitFor(`a final answer for key ${i}`, async () => {
        const r = await create(after, i);
        const e = errorOf(r);
        return !e || (!e.retryable && !UNKNOWN_OUTCOME.has(e.code)) ? r : undefined;
      }, 90_000, 500));
    }

    // The progress streams the crash cut: each heard its provider's values in order, none twice.
    for (const values of heard.values()) expect(values).toEqual([...new Set(values)].sort((a, b) => a - b));

    // No effect performed twice: one creation request at most per key, one ticket at most per key.
    const t = await tickets();
    for (let i = 0; i < CALLS; i++) {
      const key = `crash-${signal}-${i}`;
      expect(t.received[key] ?? 0).toBeLessThanOrEqual(1);
      expect(t.tickets.filter((x) => x.operationKey === key).length).toBeLessThanOrEqual(1);
      // The answer agrees with the world: a success exactly when the provider holds the ticket.
      const ok = !errorOf(finals.get(i)!);
      expect({ key, ok }).toEqual({ key, ok: t.tickets.some((x) => x.operationKey === key) });
    }

    // Every call the gateway answered for, before or after the crash, is in the ledger.
    const intents = new Set([...answeredBefore, ...[...finals.values()].map((r) => receiptOf(r)?.intentId ?? errorOf(r)?.intentId).filter((x): x is string => !!x)]);
    for (const intentId of intents) {
      await waitFor(`ledger has ${intentId}`, async () => (await fetch(`${base}/calls/${intentId}`, { headers: { authorization: `Bearer ${admin}` } })).status === 200, 30_000, 200);
    }

    // Every hold captured or released; what left the wallet is exactly what the settled calls cost.
    const wallet = await waitFor('no money held', async () => {
      const w = (await (await fetch(`${base}/admin/owners/${ownerId}/wallet`, { headers: { authorization: `Bearer ${admin}` } })).json()) as { balances: { asset: string; available: string; held: string }[] };
      const usdc = w.balances.find((b) => b.asset === 'USDC')!;
      return usdc.held === '0' ? usdc : undefined;
    }, 120_000, 500);
    const settledCalls = await waitFor('every call settled or refunded', async () => {
      let settled = 0;
      for (const intentId of intents) {
        const tl = (await (await fetch(`${base}/calls/${intentId}`, { headers: { authorization: `Bearer ${admin}` } })).json()) as { timeline: { type: string }[] };
        const types = tl.timeline.map((e) => e.type);
        if (types.includes('PaymentHeld') && !types.includes('CallSettled') && !types.includes('CallRefunded')) return undefined;
        if (types.includes('CallSettled')) settled++;
        expect(types.filter((x) => x === 'CallSettled').length + types.filter((x) => x === 'CallRefunded').length).toBeLessThanOrEqual(1);
      }
      return settled;
    }, 120_000, 1000);
    expect(BigInt(wallet.available)).toBe(DEPOSIT - PRICE * BigInt(settledCalls));

    // The ledger's event archive came through the crash whole: every event the ledger applied is
    // archived, once (event ids are unique), and the chain verifies from position 1 without a gap.
    const verdict = (await (await fetch(`${base}/admin/archive/verify`, { headers: { authorization: `Bearer ${admin}` } })).json()) as { ok: boolean; rows: number };
    expect(verdict.ok).toBe(true);
    const pg = new PgClient({ connectionString: `postgres://postgres:postgres@127.0.0.1:${ports.pg}/tollgate` });
    await pg.connect();
    try {
      const missing = await pg.query('SELECT count(*)::int AS n FROM ledger.timeline_entry t WHERE NOT EXISTS (SELECT 1 FROM ledger.event_archive a WHERE a.event_id = t.event_id)');
      expect(missing.rows[0].n).toBe(0);
      const archived = await pg.query('SELECT count(*)::int AS n, count(DISTINCT event_id)::int AS d FROM ledger.event_archive');
      expect(archived.rows[0]).toEqual({ n: verdict.rows, d: verdict.rows });
    } finally {
      await pg.end();
    }
    expect(settledCalls).toBeLessThanOrEqual(t.tickets.filter((x) => x.operationKey.startsWith(`crash-${signal}-`)).length);
  });
});
