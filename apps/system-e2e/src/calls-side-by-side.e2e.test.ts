/**
 * B3, B4 — calls side by side, in both modes: a command's I/O never holds the consumer that decided it. Sixteen paid
 * calls to a provider that answers in 3 s all answer in under 6 s (never one after another); a paid call to another
 * provider meanwhile answers in its usual time; a call to a provider that hangs until the deadline holds nothing else
 * up, not even that provider's other calls. Distributed: every service its own process on the real Kafka broker;
 * embedded: `npm start`'s one process. The providers are the sample providers, in their own process.
 */
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type DistributedSystem, freePort, type RunningProcess, startDistributedSystem, startTsProcess, waitFor } from '@tollgate/testing';
import { callThrough, connectAgent, errorOf, type EmbeddedSystem, postJson, receiptOf, startEmbeddedSystem } from './agent-client';

jest.setTimeout(300_000);

const SERVICES = ['gateway', 'discovery', 'execution', 'payment', 'settlement', 'ledger', 'sample-providers'] as const;
const PROVIDERS_TOKEN = 'side-by-side-providers-token-0123456789';
/** Short enough that the hanging call ends within the suite, long enough that 3 s calls are ordinary. */
const DEADLINE_MS = '8000';
const PRICE = '100';

/** Where each admin route lives: one host in embedded mode, one service each in distributed mode. */
interface Hosts { gateway: string; discovery: string; payment: string; providers: string; token: string }

/** A funded owner, its agent on a new URL, both providers registered and both tools priced, the prices in the catalog. */
async function payingAgent(h: Hosts, registerText: boolean): Promise<Client> {
  const providers = registerText ? ['slow-tools', 'text-tools'] : ['slow-tools'];
  for (const p of providers) expect((await postJson(`${h.discovery}/admin/providers`, { providerId: p, endpoint: `${h.providers}/providers/${p}/mcp` }, h.token)).status).toBe(201);
  const ownerId = (await postJson(`${h.gateway}/admin/owners`, { name: 'Side by side' }, h.token)).json['ownerId'] as string;
  const agentId = (await postJson(`${h.gateway}/admin/owners/${ownerId}/agents`, { name: 'a' }, h.token)).json['agentId'] as string;
  const credential = (await postJson(`${h.gateway}/admin/agents/${agentId}/credentials`, {}, h.token)).json['credential'] as string;
  expect((await postJson(`${h.gateway}/admin/mcp-urls`, { slug: 'side', discoveryMode: 'search' }, h.token)).status).toBe(201);
  expect((await postJson(`${h.payment}/admin/owners/${ownerId}/deposits`, { reference: 'side-1', amount: { amountMinor: '1000000', asset: 'USDC' } }, h.token)).status).toBe(201);
  const agent = await connectAgent(`${h.gateway}/mcp/side`, credential);
  await waitFor('both tools priced in the catalog', async () => {
    for (const tool of ['slow_echo', 'reverse_text']) {
      await fetch(`${h.discovery}/admin/tools/${tool}`, { method: 'PATCH', headers: { 'content-type': 'application/json', authorization: `Bearer ${h.token}` }, body: JSON.stringify({ priceMinor: PRICE, asset: 'USDC' }) });
      const r = (await agent.callTool({ name: 'get_tool', arguments: { name: tool } })) as CallToolResult;
      if (errorOf(r) || (r.structuredContent as { price: { amountMinor: string } | null }).price?.amountMinor !== PRICE) return undefined;
    }
    return true;
  }, 120_000, 500);
  return agent;
}

/** A paid call and how long its answer took (ms after `since`). */
async function timedCall(agent: Client, tool: string, args: Record<string, unknown>, since = Date.now()): Promise<{ ms: number; result: CallToolResult }> {
  const result = await callThrough(agent, tool, args);
  return { ms: Date.now() - since, result };
}

const paidAndAnswered = (r: CallToolResult) => ({ error: errorOf(r)?.code ?? null, held: receiptOf(r)?.held.amountMinor });

/** What each mode's suite runs against: a paying agent, and the ledger's finance API with an operator token. */
interface World { agent: Client; ledger: string; token: string; stop(): Promise<void> }

function sideBySide(mode: string, start: () => Promise<World>): void {
  describe(`calls side by side (${mode})`, () => {
    let world: World;
    beforeAll(async () => {
      world = await start();
    });
    afterAll(async () => {
      await world?.agent.close();
      await world?.stop();
    });

    it('16 calls to a 3 s provider all answer within 6 s; a call to another provider meanwhile takes its usual time', async () => {
      const { agent } = world;
      const usual = await timedCall(agent, 'reverse_text', { text: 'usual' });
      expect(paidAndAnswered(usual.result)).toEqual({ error: null, held: PRICE });
      const t0 = Date.now();
      const slow = Array.from({ length: 16 }, (_, i) => timedCall(agent, 'slow_echo', { message: `s${i}`, delayMs: 3000 }, t0));
      await new Promise((r) => setTimeout(r, 500));
      const during = await timedCall(agent, 'reverse_text', { text: 'during' });
      const answers = await Promise.all(slow);
      expect(answers.map((a) => paidAndAnswered(a.result))).toEqual(Array(16).fill({ error: null, held: PRICE }));
      expect(answers.map((a) => a.result.content)).toEqual(answers.map((_, i) => [{ type: 'text', text: `slow: s${i}` }]));
      expect(Math.max(...answers.map((a) => a.ms))).toBeLessThan(6000);
      expect(paidAndAnswered(during.result)).toEqual({ error: null, held: PRICE });
      expect(during.ms).toBeLessThan(usual.ms + 1000);
    });

    it('B6: the ledger has each call within 1 s of its receipt; until then it says the call is known, never a bare 404', async () => {
      const lags: number[] = [];
      for (let i = 0; i < 10; i++) {
        const r = await callThrough(world.agent, 'reverse_text', { text: `ledger ${i}` });
        const receivedAt = Date.now();
        const intentId = receiptOf(r)!.intentId;
        for (;;) {
          const res = await fetch(`${world.ledger}/calls/${intentId}`, { headers: { authorization: `Bearer ${world.token}` } });
          if (res.status === 200) break;
          expect({ status: res.status, code: ((await res.json()) as { code: string }).code }).toEqual({ status: 404, code: 'CALL_NOT_YET_IN_LEDGER' });
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        lags.push(Date.now() - receivedAt);
      }
      expect(Math.max(...lags)).toBeLessThan(1000);
      // A call no one made is simply not found.
      const unknown = await fetch(`${world.ledger}/calls/00000000-0000-4000-8000-000000000000`, { headers: { authorization: `Bearer ${world.token}` } });
      expect(((await unknown.json()) as { code: string }).code).toBe('CALL_NOT_FOUND');
    });

    it('a provider that hangs until the deadline holds up nothing else, not even its own other calls', async () => {
      const { agent } = world;
      const hanging = timedCall(agent, 'slow_echo', { message: 'hang', delayMs: 60_000 });
      await new Promise((r) => setTimeout(r, 500));
      const others = await Promise.all([
        timedCall(agent, 'reverse_text', { text: 'a' }), timedCall(agent, 'slow_echo', { message: 'quick', delayMs: 200 }), timedCall(agent, 'reverse_text', { text: 'b' }),
      ]);
      expect(others.map((o) => paidAndAnswered(o.result))).toEqual(Array(3).fill({ error: null, held: PRICE }));
      expect(Math.max(...others.map((o) => o.ms))).toBeLessThan(2500);
      // The hanging call itself ends at its deadline with an unknown outcome, reconciled by its key (not charged twice).
      const hung = await hanging;
      expect(hung.ms).toBeGreaterThanOrEqual(Number(DEADLINE_MS) - 1000);
    });
  });
}

sideBySide('distributed', async () => {
  const system: DistributedSystem = await startDistributedSystem(SERVICES, { GATEWAY_CALL_DEADLINE_MS: DEADLINE_MS, SETTLEMENT_VERIFICATION_WINDOW_MS: '200' });
  const h = { gateway: system.url('gateway'), discovery: system.url('discovery'), payment: system.url('payment'), providers: system.url('sample-providers'), token: system.adminToken };
  return { agent: await payingAgent(h, true), ledger: system.url('ledger'), token: system.adminToken, stop: () => system.stop() };
});

sideBySide('embedded', async () => {
  const port = await freePort();
  const providers: RunningProcess = startTsProcess('sample-providers', 'apps/sample-providers/src/main.ts', [], { PORT: String(port), SAMPLE_PROVIDERS_TOKEN: PROVIDERS_TOKEN });
  await providers.waitForOutput(/listening/, 120_000);
  const providersUrl = `http://127.0.0.1:${port}`;
  const system: EmbeddedSystem = await startEmbeddedSystem('side-by-side', { GATEWAY_CALL_DEADLINE_MS: DEADLINE_MS, UPSTREAM_CREDENTIALS: `${providersUrl}=${PROVIDERS_TOKEN}` });
  const h = { gateway: system.base, discovery: system.base, payment: system.base, providers: providersUrl, token: system.adminToken };
  // The embedded host serves text-tools itself; slow-tools comes from the providers' process.
  return { agent: await payingAgent(h, false), ledger: system.base, token: system.adminToken, stop: async () => { await system.stop(); await providers.stop(); } };
});
