/**
 * G5.3, B3 — kill -9 between a metered call's result and its settlement, in both modes: metered calls are answered
 * (their usage recorded, their maximum held, VERIFYING) and then the processes that settle and release are killed with
 * SIGKILL before the verification window closes — the embedded host's whole process group, or distributed mode's
 * settlement and payment. After the restart every call settles once, charged exactly units × unit price (at least the
 * minimum), the rest released: the wallet drops by the sum of the charges, nothing stays held, nothing is charged twice.
 */
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type DistributedSystem, freePort, type RunningProcess, startDistributedSystem, startTsProcess, waitFor } from '@tollgate/testing';
import { callThrough, connectAgent, errorOf, postJson, receiptOf } from './agent-client';

jest.setTimeout(300_000);

/** summarize_text: 0.001 USDC (1000) per 100 characters, at least 5000, at most 100000. */
const TEXTS = [50, 250, 1234, 4000, 20_000].map((n) => 'x'.repeat(n));
const CHARGES = TEXTS.map((t) => Math.min(Math.max(Math.ceil(t.length / 100) * 1000, 5000), 100_000));
const DEPOSIT = 10_000_000n;

interface Rig {
  agent: Client;
  /** A GET on the admin/finance API (embedded: one host; distributed: the ledger or the payment service). */
  wallet(): Promise<{ available: bigint; held: bigint }>;
  ledger(intentId: string): Promise<{ timeline: { type: string }[] }>;
  /** SIGKILL what settles and releases, then start it again. */
  crashAndRestart(): Promise<void>;
  reconnect(): Promise<Client>;
  stop(): Promise<void>;
}

async function meteredCallsSurvive(rig: Rig, label: string): Promise<void> {
  const before = await rig.wallet();
  const answered: CallToolResult[] = [];
  for (const [i, text] of TEXTS.entries()) answered.push(await callThrough(rig.agent, 'summarize_text', { text }, `${label}-${i}`));
  for (const r of answered) expect(receiptOf(r)).toMatchObject({ status: 'VERIFYING', held: { amountMinor: '100000' } });
  await rig.crashAndRestart();
  const agent = await rig.reconnect();
  for (const [i, text] of TEXTS.entries()) {
    const done = await waitFor(`${label}-${i} settled`, async () => {
      const r = await callThrough(agent, 'summarize_text', { text }, `${label}-${i}`);
      return !errorOf(r) && receiptOf(r)?.status === 'SETTLED' ? r : undefined;
    }, 60_000, 500);
    expect(receiptOf(done)).toMatchObject({ intentId: receiptOf(answered[i]!)!.intentId, charged: { amountMinor: String(CHARGES[i]) } });
  }
  const after = await waitFor('nothing held', async () => {
    const w = await rig.wallet();
    return w.held === before.held ? w : undefined;
  }, 60_000, 500);
  expect(before.available - after.available).toBe(BigInt(CHARGES.reduce((a, b) => a + b, 0)));
  for (const r of answered) {
    // The ledger is a read model behind the receipt (its lag is bounded, not zero): wait for the settlement to reach it.
    const intentId = receiptOf(r)!.intentId;
    const types = await waitFor(`${intentId} settled in the ledger`, async () => {
      const t = (await rig.ledger(intentId)).timeline.map((e) => e.type);
      return t.includes('CallSettled') ? t : undefined;
    }, 15_000, 200);
    expect(types.filter((t) => t === 'CallSettled' || t === 'CallRefunded')).toEqual(['CallSettled']);
  }
  await agent.close();
}

describe('a metered call killed between its result and its settlement (embedded, SIGKILL of the process group)', () => {
  let dataDir: string;
  let embedded: RunningProcess;
  let rig: Rig;
  const ports = { http: 0, pg: 0 };

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-metered-crash-'));
    chmodSync(dataDir, 0o755);
    [ports.http, ports.pg] = [await freePort(), await freePort()];
    const start = async () => {
      embedded = startTsProcess('embedded', 'apps/embedded/src/main.ts', [], {
        PORT: String(ports.http), EMBEDDED_PG_PORT: String(ports.pg), DATA_DIR: dataDir, LOG_LEVEL: 'warn', SETTLEMENT_VERIFICATION_WINDOW_MS: '4000',
      }, { ownGroup: true });
      await embedded.waitForOutput(/Tollgate is running/, 150_000);
    };
    await start();
    const demo = JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as Record<string, string>;
    const base = `http://127.0.0.1:${ports.http}`;
    const get = async (p: string) => (await fetch(`${base}${p}`, { headers: { authorization: `Bearer ${demo['adminToken']}` } })).json();
    rig = {
      agent: await connectAgent(demo['searchMcpUrl']!, demo['credential']!),
      async wallet() {
        const w = (await get(`/admin/owners/${demo['ownerId']}/wallet`)) as { balances: { asset: string; available: string; held: string }[] };
        const usdc = w.balances.find((b) => b.asset === 'USDC')!;
        return { available: BigInt(usdc.available), held: BigInt(usdc.held) };
      },
      ledger: async (intentId) => waitFor('the call in the ledger', async () => {
        const t = (await get(`/calls/${intentId}`)) as { timeline?: { type: string }[] };
        return t.timeline ? (t as { timeline: { type: string }[] }) : undefined;
      }, 10_000, 200),
      async crashAndRestart() {
        await embedded.killGroup('SIGKILL');
        await start();
      },
      reconnect: () => connectAgent(demo['searchMcpUrl']!, demo['credential']!),
      stop: async () => {
        await embedded.killGroup('SIGKILL').catch(() => undefined);
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  });
  afterAll(async () => {
    await rig?.agent.close().catch(() => undefined);
    await rig?.stop();
  });

  it('settles every call once after the restart, charged by its usage, the rest released', () => meteredCallsSurvive(rig, 'embedded-crash'));
});

describe('a metered call killed between its result and its settlement (distributed, kill -9 of settlement and payment)', () => {
  let system: DistributedSystem;
  let rig: Rig;

  beforeAll(async () => {
    system = await startDistributedSystem(['gateway', 'discovery', 'execution', 'payment', 'settlement', 'ledger', 'sample-providers'], { SETTLEMENT_VERIFICATION_WINDOW_MS: '4000' });
    const token = system.adminToken;
    const gw = system.url('gateway');
    expect((await postJson(`${system.url('discovery')}/admin/providers`, { providerId: 'summaries', endpoint: `${system.url('sample-providers')}/providers/summaries/mcp` }, token)).status).toBe(201);
    const ownerId = (await postJson(`${gw}/admin/owners`, { name: 'Metered crash' }, token)).json['ownerId'] as string;
    const agentId = (await postJson(`${gw}/admin/owners/${ownerId}/agents`, { name: 'a' }, token)).json['agentId'] as string;
    const credential = (await postJson(`${gw}/admin/agents/${agentId}/credentials`, {}, token)).json['credential'] as string;
    expect((await postJson(`${gw}/admin/mcp-urls`, { slug: 'metered', discoveryMode: 'search' }, token)).status).toBe(201);
    expect((await postJson(`${system.url('payment')}/admin/owners/${ownerId}/deposits`, { reference: 'metered-1', amount: { amountMinor: String(DEPOSIT), asset: 'USDC' } }, token)).status).toBe(201);
    const connect = () => connectAgent(`${gw}/mcp/metered`, credential);
    const agent = await connect();
    await waitFor('summarize_text metered in the catalog', async () => {
      const r = (await agent.callTool({ name: 'get_tool', arguments: { name: 'summarize_text' } })) as CallToolResult;
      return !errorOf(r) && (r.structuredContent as { price?: { metered?: unknown } }).price?.metered !== undefined;
    }, 90_000, 300);
    const get = async (url: string) => (await fetch(url, { headers: { authorization: `Bearer ${token}` } })).json();
    rig = {
      agent,
      async wallet() {
        const w = (await get(`${system.url('payment')}/admin/owners/${ownerId}/wallet`)) as { balances: { asset: string; available: string; held: string }[] };
        const usdc = w.balances.find((b) => b.asset === 'USDC')!;
        return { available: BigInt(usdc.available), held: BigInt(usdc.held) };
      },
      ledger: async (intentId) => waitFor('the call in the ledger', async () => {
        const t = (await get(`${system.url('ledger')}/calls/${intentId}`)) as { timeline?: { type: string }[] };
        return t.timeline ? (t as { timeline: { type: string }[] }) : undefined;
      }, 10_000, 200),
      async crashAndRestart() {
        for (const name of ['settlement', 'payment']) await system.processes.filter((p) => p.name === name).at(-1)!.stop('SIGKILL');
        for (const name of ['settlement', 'payment']) system.start(name);
        for (const name of ['settlement', 'payment']) {
          await waitFor(`${name} ready`, async () => (await fetch(`${system.url(name)}/health/ready`).catch(() => undefined))?.status === 200 || undefined, 120_000, 250);
        }
      },
      reconnect: connect,
      stop: () => system.stop(),
    };
  });
  afterAll(async () => {
    await rig?.agent.close().catch(() => undefined);
    await rig?.stop();
  });

  it('settles every call once after the restart, charged by its usage, the rest released', () => meteredCallsSurvive(rig, 'distributed-crash'));
});
