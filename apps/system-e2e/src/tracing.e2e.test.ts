/**
 * One call is one trace across services. Each service runs as its own process, exporting spans by
 * OTLP/HTTP to a collector this test runs; the MCP request's span at the gateway is the root, the W3C context travels in
 * every event's headers (outbox → Kafka → consumer → its own events), and the consumers' spans of the call — payment,
 * execution, settlement, ledger — all carry the gateway's trace id. With no OTLP endpoint, tracing is off (the other
 * suites run that way).
 */
import { createServer, type Server } from 'node:http';
import { type AddressInfo } from 'node:net';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type DistributedSystem, startDistributedSystem, waitFor } from '@tollgate/testing';
import { callThrough, connectAgent, errorOf, postJson, receiptOf } from './agent-client';

jest.setTimeout(300_000);

const SERVICES = ['gateway', 'discovery', 'execution', 'payment', 'settlement', 'ledger', 'sample-providers'];

interface ExportedSpan { service: string; traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes: Record<string, string> }

/** A minimal OTLP/HTTP JSON collector: keeps every span it is sent, with its resource's service.name. */
function startCollector(): Promise<{ server: Server; url: string; spans: ExportedSpan[] }> {
  const spans: ExportedSpan[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { resourceSpans: { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: { traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: { key: string; value: { stringValue?: string } }[] }[] }[] }[] };
      for (const rs of body.resourceSpans ?? []) {
        const service = rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue ?? '?';
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            spans.push({ service, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId, name: s.name, kind: s.kind,
              attributes: Object.fromEntries((s.attributes ?? []).map((a) => [a.key, a.value.stringValue ?? ''])) });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans })));
}

describe('traces across services', () => {
  let collector: Awaited<ReturnType<typeof startCollector>>;
  let system: DistributedSystem;
  let agent: Client;

  beforeAll(async () => {
    collector = await startCollector();
    system = await startDistributedSystem(SERVICES, { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, SETTLEMENT_VERIFICATION_WINDOW_MS: '300', SETTLEMENT_SWEEP_INTERVAL_MS: '100' });
    const token = system.adminToken;
    const gw = system.url('gateway');
    expect((await postJson(`${gw}/admin/mcp-urls`, { slug: 'traced', discoveryMode: 'search' }, token)).status).toBe(201);
    expect((await postJson(`${system.url('discovery')}/admin/providers`, { providerId: 'catalog-demo', endpoint: `${system.url('sample-providers')}/providers/catalog-demo/mcp` }, token)).json['ok']).toBe(true);
    const patch = await fetch(`${system.url('discovery')}/admin/tools/convert_currency`, { method: 'PATCH', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ priceMinor: '500', asset: 'USDC' }) });
    expect(patch.status).toBe(200);
    const ownerId = (await postJson(`${gw}/admin/owners`, { name: 'traced' }, token)).json['ownerId'] as string;
    expect((await postJson(`${system.url('payment')}/admin/owners/${ownerId}/deposits`, { reference: 'trace-1', amount: { amountMinor: '5000', asset: 'USDC' } }, token)).status).toBe(201);
    const agentId = (await postJson(`${gw}/admin/owners/${ownerId}/agents`, { name: 'a' }, token)).json['agentId'] as string;
    const credential = (await postJson(`${gw}/admin/agents/${agentId}/credentials`, {}, token)).json['credential'] as string;
    agent = await connectAgent(`${gw}/mcp/traced`, credential);
    await waitFor('the priced tool in the gateway', async () => {
      const r = (await agent.callTool({ name: 'get_tool', arguments: { name: 'convert_currency' } })) as CallToolResult;
      return !errorOf(r) && (r.structuredContent as { price: unknown }).price !== null;
    }, 90_000, 300);
  });

  afterAll(async () => {
    await agent?.close();
    await system?.stop();
    collector?.server.close();
  });

  it('a paid call\'s spans in gateway, payment, execution, settlement and ledger share one trace id', async () => {
    const r = (await callThrough(agent, 'convert_currency', { amount: '10', from: 'USD', to: 'EUR' }, 'trace-key-1')) as CallToolResult;
    expect(errorOf(r)).toBeUndefined();
    const intentId = receiptOf(r)!.intentId;
    const ofCall = () => collector.spans.filter((s) => s.attributes['tollgate.intent_id'] === intentId);
    await waitFor('the call\'s spans from settlement and the ledger, and the trace\'s root', async () =>
      ['payment', 'execution', 'settlement', 'ledger'].every((svc) => ofCall().some((s) => s.service === svc))
      // the settlement sweeper's CallSettled, written a verification window later, and payment's release after it
      && ofCall().some((s) => s.service === 'payment' && s.name.startsWith('settlement.call.settled'))
      // (spans come from five processes, each exporting every half second: wait until every parent has arrived)
      && ofCall().every((s) => collector.spans.some((r) => r.traceId === s.traceId && !r.parentSpanId))
      && ofCall().every((s) => collector.spans.some((r) => r.spanId === s.parentSpanId)), 60_000, 300);
    const traceIds = new Set(ofCall().map((s) => s.traceId));
    expect(traceIds.size).toBe(1);
    const [traceId] = [...traceIds];
    const trace = collector.spans.filter((s) => s.traceId === traceId);
    const services = new Set(trace.map((s) => s.service));
    expect([...services]).toEqual(expect.arrayContaining(['gateway', 'payment', 'execution', 'settlement', 'ledger']));
    // The root is the gateway's server span of the MCP request; every consumer span has a parent in the trace.
    const root = trace.find((s) => !s.parentSpanId);
    expect(root).toMatchObject({ service: 'gateway', name: 'HTTP POST', kind: 2 });
    const ids = new Set(trace.map((s) => s.spanId));
    expect(trace.filter((s) => s.kind === 5).every((s) => s.parentSpanId && ids.has(s.parentSpanId))).toBe(true);
  });

  it('reports each consumer group\'s lag from the broker and the outbox backlog on /metrics', async () => {
    await waitFor('the ledger caught up with the broker', async () => {
      const metrics = await (await fetch(`${system.url('ledger')}/metrics`, { headers: { authorization: `Bearer ${system.metricsToken}` } })).text();
      const lag = [...metrics.matchAll(/tollgate_figure\{name="ledger\.consumerLag\.[^"]+"\} (\d+)/g)].map((m) => Number(m[1]));
      return lag.length > 0 && lag.every((n) => n === 0) && /tollgate_figure\{name="ledger\.outboxBacklog"\} 0/.test(metrics);
    }, 30_000, 1000);
    const payment = await (await fetch(`${system.url('payment')}/metrics`, { headers: { authorization: `Bearer ${system.metricsToken}` } })).text();
    expect(payment).toMatch(/tollgate_figure\{name="payment\.holdsOpen"\} \d+/);
    expect(payment).toMatch(/tollgate_event_age_seconds_count\{consumer="payment[^"]*",type="CallRequested"\} [1-9]/);
  });
});
