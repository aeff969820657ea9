/**
 * B3, B4: every service as its own process on the real
 * Kafka broker and PostgreSQL; an agent (official MCP SDK client) calls
 * call_tool for server-everything's `echo`; the ledger shows dispatched,
 * result-received and effect-confirmed as separate facts. A provider's -32021 (it needs a client capability the gateway
 * never offers upstream) travels the same way, as execution's EffectRejected, and reaches the agent as -32021. A
 * provider's progress on a call whose agent asked for it crosses from execution to the gateway (CallProgressed) and
 * reaches the agent as notifications/progress before the result.
 */
import { randomBytes } from 'node:crypto';
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { TopicSpecs } from '@tollgate/contracts';
import { createTestDatabase, ensureTopics, freePort, type RunningProcess, startTsProcess, waitFor } from '@tollgate/testing';
import { callToolWhenListed, connectAgent, expectThreeSeparateFacts, postJson, startEverythingServer, timelineWhen } from './agent-client';

jest.setTimeout(240_000);

const SERVICES = ['gateway', 'discovery', 'execution', 'payment', 'settlement', 'ledger'] as const;
const FIXTURES_TOKEN = 'distributed-fixtures-token-0123456789';

describe('distributed mode: one call through every service, each its own process', () => {
  const processes: RunningProcess[] = [];
  const ports: Record<string, number> = {};
  const adminToken = randomBytes(18).toString('base64url');
  let db: { url: string; drop(): Promise<void> };
  let agent: Client;
  let credential: string;
  let fixturesUrl: string;

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_e2e');
    // A topic namespace of its own: this run never sees another run's events on the shared broker.
    const prefix = `e2e-${Date.now().toString(36)}-${randomBytes(2).toString('hex')}.`;
    await ensureTopics(TopicSpecs.map((t) => prefix + t.name));
    const [everythingPort, fixturesPort] = [await freePort(), await freePort()];
    processes.push(startEverythingServer(everythingPort));
    // The conformance fixtures (a sample provider in its own process): a tool that needs sampling, never offered upstream.
    processes.push(startTsProcess('sample-providers', 'apps/sample-providers/src/main.ts', [], { PORT: String(fixturesPort), SAMPLE_PROVIDERS_TOKEN: FIXTURES_TOKEN }));
    fixturesUrl = `http://127.0.0.1:${fixturesPort}`;
    for (const s of SERVICES) ports[s] = await freePort();
    const env = (s: string) => ({
      PORT: String(ports[s]), DATABASE_URL: db.url, KAFKA_TOPIC_PREFIX: prefix, OUTBOX_POLL_INTERVAL_MS: '1000',
      GATEWAY_ADMIN_TOKEN: adminToken, DISCOVERY_ADMIN_TOKEN: adminToken, LEDGER_ADMIN_TOKEN: adminToken, SETTLEMENT_VERIFICATION_WINDOW_MS: '200',
      UPSTREAM_CREDENTIALS: `${fixturesUrl}=${FIXTURES_TOKEN}`,
    });
    for (const s of SERVICES) processes.push(startTsProcess(s, `apps/${s}/src/main.ts`, [], env(s)));
    await Promise.all(
      SERVICES.map((s) =>
        waitFor(`${s} ready`, async () => (await fetch(`http://127.0.0.1:${ports[s]}/health/ready`)).status === 200, 120_000, 250).catch((e) => {
          const p = processes.find((x) => x.name === s);
          throw new Error(`${String(e)}\n${p?.output().slice(-3000)}`);
        }),
      ),
    );
    await processes[0]!.waitForOutput(/listening on port/i);

    const gw = `http://127.0.0.1:${ports['gateway']}`;
    const owner = await postJson(`${gw}/admin/owners`, { name: 'E2E owner' }, adminToken);
    const agentRow = await postJson(`${gw}/admin/owners/${owner.json['ownerId']}/agents`, { name: 'E2E agent' }, adminToken);
    const cred = await postJson(`${gw}/admin/agents/${agentRow.json['agentId']}/credentials`, {}, adminToken);
    credential = cred.json['credential'] as string;
    expect((await postJson(`${gw}/admin/mcp-urls`, { slug: 'e2e' }, adminToken)).status).toBe(201);
    const reg = await postJson(`http://127.0.0.1:${ports['discovery']}/admin/providers`, { providerId: 'everything', endpoint: `http://127.0.0.1:${everythingPort}/mcp` }, adminToken);
    expect(reg.status).toBe(201);
    agent = await connectAgent(`${gw}/mcp/e2e`, credential);
  });

  afterAll(async () => {
    await agent?.close();
    await Promise.all(processes.map((p) => p.stop()));
    await db?.drop();
  });

  it('returns the upstream echo unchanged, and the ledger records each fact with its own time and producer', async () => {
    const result = await callToolWhenListed(agent, 'echo', { message: 'hello through Kafka' });
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: 'Echo: hello through Kafka' }]);
    const receipt = result._meta?.['assay/receipt'] as { intentId: string; providerId: string; attempts: number; classification: string };
    expect(receipt).toMatchObject({ providerId: 'everything', attempts: 1, classification: 'ok' });

    const t = await timelineWhen(`http://127.0.0.1:${ports['ledger']}/calls`, receipt.intentId, (x) => x.status === 'settled', adminToken);
    expectThreeSeparateFacts(t);
    expect(t.timeline.find((e) => e.type === 'CallSettled')?.producer).toBe('settlement');
  });

  it('a provider that needs a client capability: the fact crosses Kafka, the 2026-07-28 agent gets -32021, nothing is charged', async () => {
    const gw = `http://127.0.0.1:${ports['gateway']}`;
    await waitFor('sample providers up', async () => (await fetch(`${fixturesUrl}/providers/conformance-fixtures/mcp`, { method: 'GET' }).catch(() => undefined))?.status !== undefined || undefined, 60_000, 250);
    const reg = await postJson(`http://127.0.0.1:${ports['discovery']}/admin/providers`, { providerId: 'conformance-fixtures', endpoint: `${fixturesUrl}/providers/conformance-fixtures/mcp` }, adminToken);
    expect(reg.status).toBe(201);
    const meta = { 'io.modelcontextprotocol/protocolVersion': '2026-07-28', 'io.modelcontextprotocol/clientCapabilities': {}, 'io.modelcontextprotocol/clientInfo': { name: 'e2e', version: '1' } };
    const call = () => fetch(`${gw}/mcp/e2e`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${credential}`, 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'tools/call', 'mcp-name': 'test_missing_capability' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'test_missing_capability', arguments: {}, _meta: meta } }),
    });
    // The gateway's catalog follows discovery through Kafka: the tool is callable once it arrived there.
    const answer = await waitFor('test_missing_capability in the catalog', async () => {
      const res = await call();
      const body = (await res.json()) as { error?: { code: number; data?: Record<string, unknown> }; result?: { _meta?: Record<string, { code?: string }> } };
      return body.result?._meta?.['assay/error']?.code === 'TOOL_NOT_IN_TOOLSET' ? undefined : { status: res.status, body };
    }, 60_000, 250);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({ code: -32021, data: { requiredCapabilities: { sampling: {} } } });
    const intentId = answer.body.error!.data!['intentId'] as string;
    const t = await timelineWhen(`http://127.0.0.1:${ports['ledger']}/calls`, intentId, (x) => x.timeline.some((e) => e.type === 'EffectRejected'), adminToken);
    expect(t.timeline.find((e) => e.type === 'EffectRejected')).toMatchObject({ producer: 'execution' });
    expect(t.timeline.some((e) => e.type === 'CallSettled')).toBe(false);
  });

  it('the provider\'s progress crosses Kafka to the agent that sent a progressToken, in order, before the result', async () => {
    const heard: { progress: number; total?: number; message?: string }[] = [];
    const result = await agent.callTool({ name: 'test_tool_with_progress', arguments: {} }, undefined, { onprogress: (p) => heard.push(p) });
    expect(result.content).toEqual([{ type: 'text', text: 'Progress test completed' }]);
    expect(heard).toEqual([{ progress: 0, total: 100, message: '0%' }, { progress: 50, total: 100, message: '50%' }, { progress: 100, total: 100, message: '100%' }]);
    // An agent that did not ask hears nothing and gets the same answer.
    const quiet = await agent.callTool({ name: 'test_tool_with_progress', arguments: {} });
    expect(quiet.content).toEqual(result.content);
  });

  it('writes structured JSON logs carrying the service and the intentId', () => {
    const execution = processes.find((p) => p.name === 'execution')!;
    const lines = execution.output().split('\n').filter((l) => l.startsWith('{'));
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(JSON.parse(l).service).toBe('execution');
    const gateway = processes.find((p) => p.name === 'gateway')!;
    expect(gateway.output()).toMatch(/"service":"gateway","intentId":"[0-9a-f-]{36}".*"msg":"call requested"/);
  });

  it('stops gracefully on SIGTERM', async () => {
    const ledger = processes.find((p) => p.name === 'ledger')!;
    await ledger.stop('SIGTERM');
    // NestJS re-raises the signal after its shutdown hooks ran; SIGKILL would mean it hung.
    expect(ledger.child.signalCode).toBe('SIGTERM');
    expect(ledger.output()).toMatch(/events stopped, outbox flushed/);
  });
});
