/**
 * Both MCP eras on the same gateway URL. The official SDK v2 client pinned to 2026-07-28
 * and the 2025-era client (`@modelcontextprotocol/sdk` 1.x) get the same agent-facing behaviour — search_tools,
 * get_tool, call_tool and direct tools, receipts, operation keys, refusals in the shared error shape, the tools/list
 * rate limit — and the 2026-07-28 wire rules (server/discover, header checks, caching hints, resultType) hold.
 */
import { Client as ModernClientClass, type Client as ModernClient, StreamableHTTPClientTransport as ModernTransportClass } from '@modelcontextprotocol/client';
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { waitFor } from '@tollgate/testing';
import { type AgentClient, atStartOfMinuteWindow, callThrough, connectAgent, connectModernAgent, type EmbeddedSystem, errorOf, postJson, receiptOf, startEmbeddedSystem } from './agent-client';

jest.setTimeout(240_000);

const MODERN = '2026-07-28';
const ENVELOPE = { 'io.modelcontextprotocol/protocolVersion': MODERN, 'io.modelcontextprotocol/clientCapabilities': {} };

describe('both MCP eras on one gateway URL', () => {
  let system: EmbeddedSystem;
  let modern: ModernClient;
  let legacy: Client;
  const eras: [string, () => AgentClient][] = [['2026-07-28', () => modern], ['2025-era', () => legacy]];

  /** A credential of the demo agent of its own, so rate limits of one test never reach another. */
  async function freshCredential(): Promise<string> {
    const issued = await postJson(`${system.base}/admin/agents/${system.demo['agentId']}/credentials`, {}, system.adminToken);
    return issued.json['credential'] as string;
  }

  /** A raw 2026-07-28 POST as the revision's transport defines it (headers mirror the body). */
  async function modernPost(url: string, method: string, params: Record<string, unknown>, headers: Record<string, string> = {}) {
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${system.demo['credential']}`,
        'mcp-protocol-version': MODERN, 'mcp-method': method, ...(typeof params['name'] === 'string' ? { 'mcp-name': params['name'] } : {}), ...headers,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method, params: { ...params, _meta: { ...ENVELOPE, ...(params['_meta'] as object | undefined) } } }),
    });
    return { status: res.status, headers: res.headers, body: (await res.json()) as { result?: Record<string, unknown>; error?: { code: number; message: string; data?: unknown } } };
  }

  beforeAll(async () => {
    system = await startEmbeddedSystem('eras', { DEMO_MONEY: 'true', SETTLEMENT_VERIFICATION_WINDOW_MS: '200' });
    modern = await connectModernAgent(system.demo['mcpUrl']!, system.demo['credential']!);
    legacy = await connectAgent(system.demo['mcpUrl']!, system.demo['credential']!);
    await waitFor('the priced tools in the catalog', async () => {
      const r = (await legacy.callTool({ name: 'get_tool', arguments: { name: 'reverse_text' } })) as CallToolResult;
      return !errorOf(r) && (r.structuredContent as { price: unknown }).price !== null;
    }, 60_000, 300);
  });

  afterAll(async () => {
    await modern?.close();
    await legacy?.close();
    await system?.stop();
  });

  it('a client pinned to 2026-07-28 connects through server/discover; the 2025 client through initialize, on the same URL', () => {
    expect(modern.getProtocolEra()).toBe('modern');
    expect(modern.getNegotiatedProtocolVersion()).toBe(MODERN);
    expect(modern.getDiscoverResult()).toMatchObject({ supportedVersions: expect.arrayContaining([MODERN]), capabilities: { tools: {} }, resultType: 'complete' });
    expect(legacy.getServerVersion()).toMatchObject({ name: 'tollgate' });
  });

  describe.each(eras)('%s', (era, agentOf) => {
    it('search_tools and get_tool find a priced tool', async () => {
      const found = (await agentOf().callTool({ name: 'search_tools', arguments: { query: 'reverse text' } })) as CallToolResult;
      expect(errorOf(found)).toBeUndefined();
      expect(JSON.stringify(found.structuredContent)).toContain('reverse_text');
      const tool = (await agentOf().callTool({ name: 'get_tool', arguments: { name: 'reverse_text' } })) as CallToolResult;
      expect(tool.structuredContent).toMatchObject({ name: 'reverse_text', price: { amountMinor: '250000', asset: 'USDC' } });
    });

    it('a paid call_tool answers with its receipt; the same operation key replays it, charged once', async () => {
      const key = `eras-${era}-paid`;
      const first = await callThrough(agentOf(), 'reverse_text', { text: `hello ${era}` }, key);
      expect(errorOf(first)).toBeUndefined();
      expect(first.content).toEqual([{ type: 'text', text: [...`hello ${era}`].reverse().join('') }]);
      const receipt = receiptOf(first)!;
      expect(receipt).toMatchObject({ toolId: 'reverse_text', attempts: 1, held: { amountMinor: '250000', asset: 'USDC' } });
      const again = await callThrough(agentOf(), 'reverse_text', { text: `hello ${era}` }, key);
      expect(receiptOf(again)?.intentId).toBe(receipt.intentId);
      expect(again._meta?.['assay/replayed']).toBe(true);
      const byKey = async () => ((await (await fetch(`${system.base}/calls?operationKey=${key}`, { headers: { authorization: `Bearer ${system.demo['operatorToken']}` } })).json()) as { calls: unknown[] }).calls;
      await waitFor('the call in the ledger', async () => (await byKey()).length > 0, 30_000, 200);
      expect(await byKey()).toHaveLength(1);
    });

    it('a catalog tool called directly by name works like call_tool', async () => {
      const r = (await agentOf().callTool({ name: 'word_count', arguments: { text: 'one two three' }, _meta: { 'assay/idempotencyKey': `eras-${era}-direct` } })) as CallToolResult;
      expect(errorOf(r)).toBeUndefined();
      expect(receiptOf(r)).toMatchObject({ toolId: 'word_count' });
    });

    it('refusals keep the shared error shape and codes: a reused key with other arguments, bad arguments', async () => {
      const key = `eras-${era}-conflict`;
      expect(errorOf(await callThrough(agentOf(), 'word_count', { text: 'a' }, key))).toBeUndefined();
      expect(errorOf(await callThrough(agentOf(), 'word_count', { text: 'b' }, key))).toMatchObject({ code: 'IDEMPOTENCY_KEY_REUSED', retryable: false });
      expect(errorOf(await callThrough(agentOf(), 'word_count', { text: 42 }, `eras-${era}-bad`))).toMatchObject({ code: 'TOOL_ARGUMENTS_INVALID' });
    });
  });

  it('initialize is gone in 2026-07-28: HTTP 404 with -32601, whatever its params (the 2025 handshake still works)', async () => {
    for (const params of [{}, { capabilities: {}, clientInfo: { name: 'probe', version: '1' } }, { protocolVersion: MODERN, capabilities: {}, clientInfo: { name: 'probe', version: '1' } }]) {
      const r = await modernPost(system.demo['mcpUrl']!, 'initialize', params);
      expect({ params, status: r.status, code: r.body.error?.code }).toEqual({ params, status: 404, code: -32601 });
    }
  });

  // Hostile nesting overflows the SDK's own validators (client and server), so it is sent raw, in each era's framing.
  it('5,000 levels of nesting are a TOOL_ARGUMENTS_INVALID result in both eras, never an internal error', async () => {
    const args = `{"text":${'['.repeat(5000)}${']'.repeat(5000)}}`;
    const post = async (meta: string, headers: Record<string, string>) => {
      const res = await fetch(system.demo['mcpUrl']!, {
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${system.demo['credential']}`, ...headers },
        body: `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"word_count","arguments":${args}${meta}}}`,
      });
      expect(res.status).toBe(200);
      return ((await res.json()) as { result: Record<string, unknown> }).result;
    };
    const newer = await post(`,"_meta":${JSON.stringify(ENVELOPE)}`, { 'mcp-protocol-version': MODERN, 'mcp-method': 'tools/call', 'mcp-name': 'word_count' });
    expect(newer).toMatchObject({ isError: true, resultType: 'complete', _meta: { 'assay/error': { code: 'TOOL_ARGUMENTS_INVALID', retryable: false } } });
    const older = await post('', {});
    expect(older).toMatchObject({ isError: true, _meta: { 'assay/error': { code: 'TOOL_ARGUMENTS_INVALID', retryable: false } } });
    expect(older['resultType']).toBeUndefined();
  });

  it('tools/list is limited per credential and URL in both eras: JSON-RPC -32029 with retryAfterMs (G9)', async () => {
    await atStartOfMinuteWindow();
    const credential = await freshCredential();
    const newer = await connectModernAgent(system.demo['mcpUrl']!, credential);
    const older = await connectAgent(system.demo['mcpUrl']!, credential);
    try {
      // The current client keeps a fresh tools/list (ttlMs): those reads never reach the gateway and are not counted.
      for (let i = 0; i < 10; i++) expect((await newer.listTools()).tools.length).toBeGreaterThan(0);
      for (let i = 0; i < 29; i++) {
        expect((await newer.listTools(undefined, { cacheMode: 'refresh' })).tools.length).toBeGreaterThan(0);
        expect((await older.listTools()).tools.length).toBeGreaterThan(0);
      }
      expect((await older.listTools()).tools.length).toBeGreaterThan(0); // the 60th read of the minute
      const refused = (p: Promise<unknown>) => p.then(() => undefined, (e: unknown) => e);
      expect(await refused(newer.listTools(undefined, { cacheMode: 'refresh' }))).toMatchObject({ code: -32029, data: { retryAfterMs: expect.any(Number) } });
      expect(await refused(older.listTools())).toMatchObject({ code: -32029, data: { retryAfterMs: expect.any(Number) } });
    } finally {
      await newer.close();
      await older.close();
    }
  });

  it('G9 in the 2026-07-28 era: after 60 refused calls in a minute, an agent\'s calls are RATE_LIMITED with retryAfterMs', async () => {
    await atStartOfMinuteWindow();
    const agentId = (await postJson(`${system.base}/admin/owners/${system.demo['ownerId']}/agents`, { name: 'Refused agent' }, system.adminToken)).json['agentId'] as string;
    const credential = (await postJson(`${system.base}/admin/agents/${agentId}/credentials`, {}, system.adminToken)).json['credential'] as string;
    const refused = await connectModernAgent(system.demo['mcpUrl']!, credential);
    try {
      for (let i = 0; i < 60; i++) expect(errorOf(await callThrough(refused, 'word_count', { text: i }))?.code).toBe('TOOL_ARGUMENTS_INVALID');
      const limited = errorOf(await callThrough(refused, 'word_count', { text: 'fine now' }));
      expect(limited).toMatchObject({ code: 'RATE_LIMITED', retryable: true, retryAfterMs: expect.any(Number) });
    } finally {
      await refused.close();
    }
  });

  it('2026-07-28 on the wire: private caching hints on tools/list, resultType on every result, no session', async () => {
    const listed = await modernPost(system.demo['mcpUrl']!, 'tools/list', {});
    expect(listed.status).toBe(200);
    expect(listed.body.result).toMatchObject({ resultType: 'complete', cacheScope: 'private', ttlMs: 30_000 });
    expect(listed.headers.get('mcp-session-id')).toBeNull();
    const discovered = await modernPost(system.demo['mcpUrl']!, 'server/discover', {});
    expect(discovered.body.result).toMatchObject({ resultType: 'complete', supportedVersions: expect.arrayContaining([MODERN]) });
    const called = await modernPost(system.demo['mcpUrl']!, 'tools/call', { name: 'get_tool', arguments: { name: 'reverse_text' } });
    expect(called.body.result).toMatchObject({ resultType: 'complete', structuredContent: { name: 'reverse_text' } });
  });

  it('2026-07-28 header rules: a Mcp-Method or Mcp-Name that disagrees with the body is -32020 with HTTP 400; an unknown revision -32022', async () => {
    const method = await modernPost(system.demo['mcpUrl']!, 'tools/list', {}, { 'mcp-method': 'tools/call' });
    expect(method.status).toBe(400);
    expect(method.body.error?.code).toBe(-32020);
    const name = await modernPost(system.demo['mcpUrl']!, 'tools/call', { name: 'get_tool', arguments: { name: 'reverse_text' } }, { 'mcp-name': 'search_tools' });
    expect(name.status).toBe(400);
    expect(name.body.error?.code).toBe(-32020);
    const unknown = await modernPost(system.demo['mcpUrl']!, 'tools/list', { _meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } }, { 'mcp-protocol-version': '2099-01-01' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: -32022, data: { supported: expect.arrayContaining([MODERN]) } });
  });

  it('subscriptions/listen: a 2026-07-28 client hears notifications/tools/list_changed when the catalog changes', async () => {
    const listener = await connectModernAgent(system.demo['mcpUrl']!, system.demo['credential']!);
    try {
      let heard = 0;
      listener.setNotificationHandler('notifications/tools/list_changed', async () => {
        heard++;
      });
      const subscription = await listener.listen({ toolsListChanged: true });
      expect(subscription.honoredFilter).toEqual({ toolsListChanged: true });
      const repriced = await fetch(`${system.base}/admin/tools/create_review_ticket`, {
        method: 'PATCH', headers: { 'content-type': 'application/json', authorization: `Bearer ${system.adminToken}` }, body: JSON.stringify({ priceMinor: '1000001', asset: 'USDC' }),
      });
      expect(repriced.status).toBe(200);
      await waitFor('the list_changed notification', async () => heard > 0, 30_000, 100);
      await subscription.close();
      expect(await subscription.closed).toBe('local');
    } finally {
      await listener.close();
    }
  });

  it('approval required, 2026-07-28: an input_required prompt; once the owner approves and the client confirms, the same call runs, charged once', async () => {
    const agentId = (await postJson(`${system.base}/admin/owners/${system.demo['ownerId']}/agents`, { name: 'Approval agent' }, system.adminToken)).json['agentId'] as string;
    const credential = (await postJson(`${system.base}/admin/agents/${agentId}/credentials`, {}, system.adminToken)).json['credential'] as string;
    const policy = await fetch(`${system.base}/admin/owners/${system.demo['ownerId']}/agents/${agentId}/spend-policy`, {
      method: 'PUT', headers: { 'content-type': 'application/json', authorization: `Bearer ${system.adminToken}` }, body: JSON.stringify({ approvalThresholdMinor: '100000' }),
    });
    expect(policy.status).toBe(200);
    const client = new ModernClientClass({ name: 'e2e-approvals', version: '1.0.0' }, { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: MODERN } } });
    let answer: 'approve' | 'decline' = 'approve';
    const prompts: string[] = [];
    client.setRequestHandler('elicitation/create', async (request) => {
      const message = (request.params as { message: string }).message;
      prompts.push(message);
      if (answer === 'decline') return { action: 'decline' };
      // The owner approves (the admin API, as `tollgate-ops money approve` does), then the user confirms.
      const approvalId = /approval ([0-9a-f-]{36})/.exec(message)![1]!;
      await postJson(`${system.base}/admin/approvals/${approvalId}/approve`, { decidedBy: 'owner@example.com' }, system.adminToken);
      return { action: 'accept', content: { approved: true } };
    });
    await client.connect(new ModernTransportClass(new URL(system.demo['mcpUrl']!), { requestInit: { headers: { Authorization: `Bearer ${credential}` } } }));
    try {
      const key = 'eras-approval-1';
      const approved = await callThrough(client, 'reverse_text', { text: 'approve me' }, key);
      expect(errorOf(approved)).toBeUndefined();
      expect(approved.content).toEqual([{ type: 'text', text: 'em evorppa' }]);
      expect(receiptOf(approved)).toMatchObject({ held: { amountMinor: '250000', asset: 'USDC' } });
      expect(prompts).toHaveLength(1);
      expect(prompts[0]).toMatch(/owner's approval/);
      // The same key again is the stored answer (no new prompt, no second charge).
      const replay = await callThrough(client, 'reverse_text', { text: 'approve me' }, key);
      expect(receiptOf(replay)?.intentId).toBe(receiptOf(approved)!.intentId);
      expect(prompts).toHaveLength(1);
      // A declined prompt gets the refusal itself, in the shared error shape.
      answer = 'decline';
      const declined = await callThrough(client, 'reverse_text', { text: 'no' }, 'eras-approval-2');
      expect(errorOf(declined)).toMatchObject({ code: 'MCP_APPROVAL_REQUIRED', retryable: true, details: { approvalId: expect.any(String) } });
      expect(prompts).toHaveLength(2);
    } finally {
      await client.close();
    }
  });

  it('the credential is checked before either era: no credential is 401 with a Bearer challenge for a 2026-07-28 request too', async () => {
    const res = await fetch(system.demo['mcpUrl']!, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', 'mcp-protocol-version': MODERN, 'mcp-method': 'server/discover' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: ENVELOPE } }),
    });
    expect(res.status).toBe(401);
    // RFC 9728: the challenge names where to sign in (the URL's protected-resource metadata).
    expect(res.headers.get('www-authenticate')).toBe(`Bearer resource_metadata="${new URL(system.demo['mcpUrl']!).origin}/.well-known/oauth-protected-resource/mcp/demo", scope="mcp"`);
    expect(((await res.json()) as { error: { data: { code: string } } }).error.data.code).toBe('MCP_CREDENTIAL_INVALID');
  });
});
