/**
 * Tenant isolation as one suite, on the running embedded system. Owners A and B, each with an agent:
 * B never sees or uses A's calls, operation keys, search cursors, private URL, balances, wallet or allowances — and
 * nothing B does is charged to A or limits A. Identity always comes from the credential, never from arguments.
 */
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { waitFor } from '@tollgate/testing';
import { callThrough, connectAgent, type EmbeddedSystem, errorOf, postJson, receiptOf, startEmbeddedSystem } from './agent-client';

jest.setTimeout(180_000);

interface Tenant { ownerId: string; agentId: string; credential: string; client: Client }

describe('tenant isolation', () => {
  let system: EmbeddedSystem;
  let base: string;
  let admin: string;
  let a: Tenant;
  let b: Tenant;
  const clients: Client[] = [];

  const adminCall = async (method: string, p: string, body?: unknown) => {
    const r = await fetch(`${base}${p}`, { method, headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` }, ...(body ? { body: JSON.stringify(body) } : {}) });
    return { status: r.status, json: (await r.json()) as Record<string, unknown> };
  };
  const connect = async (slug: string, credential: string) => {
    const c = await connectAgent(`${base}/mcp/${slug}`, credential);
    clients.push(c);
    return c;
  };
  const tenant = async (name: string): Promise<Tenant> => {
    const ownerId = (await postJson(`${base}/admin/owners`, { name }, admin)).json['ownerId'] as string;
    const agentId = (await postJson(`${base}/admin/owners/${ownerId}/agents`, { name: `${name} agent` }, admin)).json['agentId'] as string;
    const credential = (await postJson(`${base}/admin/agents/${agentId}/credentials`, {}, admin)).json['credential'] as string;
    return { ownerId, agentId, credential, client: await connect('shared', credential) };
  };
  const wallet = async (ownerId: string) => (await adminCall('GET', `/admin/owners/${ownerId}/wallet`)).json['balances'];
  const words = (r: CallToolResult) => (r.structuredContent as { words: number } | undefined)?.words;
  const search = (c: Client, args: Record<string, unknown>) => c.callTool({ name: 'search_tools', arguments: args }) as Promise<CallToolResult>;

  beforeAll(async () => {
    system = await startEmbeddedSystem('tenants', { SETTLEMENT_VERIFICATION_WINDOW_MS: '200' });
    admin = system.adminToken;
    base = system.base;
    expect((await postJson(`${base}/admin/mcp-urls`, { slug: 'shared', discoveryMode: 'search' }, admin)).status).toBe(201);
    a = await tenant('Owner A');
    b = await tenant('Owner B');
    expect((await postJson(`${base}/admin/mcp-urls`, { slug: 'private-a', ownerId: a.ownerId }, admin)).status).toBe(201);
    expect((await adminCall('PATCH', '/admin/tools/reverse_text', { priceMinor: '100', asset: 'USDC' })).status).toBe(200);
    expect((await postJson(`${base}/admin/owners/${a.ownerId}/deposits`, { reference: 'bank-a-1', amount: { amountMinor: '1000', asset: 'USDC' } }, admin)).status).toBe(201);
    await waitFor('the priced tool in the catalog', async () => {
      const r = (await a.client.callTool({ name: 'get_tool', arguments: { name: 'reverse_text' } })) as CallToolResult;
      return !errorOf(r) && (r.structuredContent as { price: unknown }).price !== null;
    }, 60_000, 300);
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => undefined)));
    await system?.stop();
  });

  it('operation keys are per agent: the same key from B runs B\'s own call, never replays A\'s answer or refuses as reused', async () => {
    const first = await callThrough(a.client, 'word_count', { text: 'alpha beta' }, 'shared-key-1');
    expect(words(first)).toBe(2);
    const other = await callThrough(b.client, 'word_count', { text: 'one two three' }, 'shared-key-1');
    expect(errorOf(other)).toBeUndefined();
    expect(words(other)).toBe(3);
    expect(other._meta?.['assay/replayed']).toBeUndefined();
    expect(receiptOf(other)!.intentId).not.toBe(receiptOf(first)!.intentId);
    // Each agent's repeat replays its own answer under the shared key.
    const bAgain = await callThrough(b.client, 'word_count', { text: 'one two three' }, 'shared-key-1');
    expect({ replayed: bAgain._meta?.['assay/replayed'], words: words(bAgain), intentId: receiptOf(bAgain)?.intentId }).toEqual({ replayed: true, words: 3, intentId: receiptOf(other)!.intentId });
    const aAgain = await callThrough(a.client, 'word_count', { text: 'alpha beta' }, 'shared-key-1');
    expect({ replayed: aAgain._meta?.['assay/replayed'], words: words(aAgain), intentId: receiptOf(aAgain)?.intentId }).toEqual({ replayed: true, words: 2, intentId: receiptOf(first)!.intentId });
    expect(JSON.stringify(other)).not.toContain(receiptOf(first)!.intentId);
  });

  it('search cursors are bound to the credential and URL that made them', async () => {
    const page = await search(a.client, { query: 'text', detail: 'names', limit: 1 });
    const cursor = (page.structuredContent as { nextCursor?: string }).nextCursor;
    expect(cursor).toBeDefined();
    expect(errorOf(await search(a.client, { cursor }))).toBeUndefined();
    expect(errorOf(await search(b.client, { cursor }))).toMatchObject({ code: 'INVALID_CURSOR', retryable: false });
    // Even A's own second credential cannot use it.
    const second = (await postJson(`${base}/admin/agents/${a.agentId}/credentials`, {}, admin)).json['credential'] as string;
    expect(errorOf(await search(await connect('shared', second), { cursor }))).toMatchObject({ code: 'INVALID_CURSOR' });
  });

  it('A\'s private URL does not exist for B — the same answer as a URL that does not exist', async () => {
    const probe = async (slug: string, credential: string) => {
      const r = await fetch(`${base}/mcp/${slug}`, { method: 'POST', headers: { authorization: `Bearer ${credential}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }) });
      return { status: r.status, body: await r.text() };
    };
    expect((await probe('private-a', a.credential)).status).toBe(200);
    const forB = await probe('private-a', b.credential);
    expect(forB).toEqual(await probe('no-such-url-at-all', b.credential));
    expect(forB.status).toBe(404);
  });

  it('a paid call by B never touches A\'s wallet; A\'s paid call is charged to A alone', async () => {
    const before = await wallet(a.ownerId);
    const refused = await callThrough(b.client, 'reverse_text', { text: 'abc' }, 'b-paid-1');
    expect(['PAYMENT_REQUIRED', 'PAYMENT_INSUFFICIENT_FUNDS']).toContain(errorOf(refused)?.code);
    expect(await wallet(a.ownerId)).toEqual(before);
    // Arguments cannot name another owner: identity comes from the credential.
    const spoof = await b.client.callTool({ name: 'call_tool', arguments: { name: 'reverse_text', arguments: { text: 'abc' }, ownerId: a.ownerId } }) as CallToolResult;
    expect(errorOf(spoof)?.code).toBe('TOOL_ARGUMENTS_INVALID');
    expect(await wallet(a.ownerId)).toEqual(before);
    const paid = await callThrough(a.client, 'reverse_text', { text: 'abc' }, 'a-paid-1');
    expect(errorOf(paid)).toBeUndefined();
    await waitFor('A charged', async () => JSON.stringify(await wallet(a.ownerId)) !== JSON.stringify(before), 20_000, 200);
    expect(await wallet(b.ownerId)).toEqual([]);
  });

  it('finance tokens scoped to B see neither A\'s balances nor A\'s calls', async () => {
    const scoped = (await postJson(`${base}/admin/finance-tokens`, { label: 'B books', ownerId: b.ownerId }, admin)).json['token'] as string;
    const intentId = receiptOf(await callThrough(a.client, 'word_count', { text: 'private words' }, 'a-books-1'))!.intentId;
    const get = (p: string) => fetch(`${base}${p}`, { headers: { authorization: `Bearer ${scoped}` } });
    expect((await get(`/balances/owners/${b.ownerId}`)).status).toBe(200);
    expect((await get(`/balances/owners/${a.ownerId}`)).status).toBe(403);
    expect((await get('/balances')).status).toBe(403);
    const call = await get(`/calls/${intentId}`);
    expect(call.status).toBe(404);
    expect(await call.text()).not.toContain('private words');
  });

  it('B exhausting its search allowance does not limit A', async () => {
    // The allowance is 30 per fixed UTC minute: 40 searches straddling a minute boundary under load may fill neither
    // window, so keep searching until refused (61 searches always fill one of at most two windows).
    let limited: CallToolResult | undefined;
    for (let i = 0; i < 100 && !limited; i++) {
      const r = await search(b.client, { query: `text ${i}`, detail: 'names', limit: 1 });
      if (errorOf(r)?.code === 'RATE_LIMITED') limited = r;
    }
    expect(limited).toBeDefined();
    expect(errorOf(await search(a.client, { query: 'text', detail: 'names', limit: 1 }))).toBeUndefined();
  });
});
