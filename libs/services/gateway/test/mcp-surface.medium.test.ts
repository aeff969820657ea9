/**
 * Medium tier (real PostgreSQL with the gateway's migrations, the embedded event log; no Kafka, no HTTP): the agents'
 * MCP surface over the SDK's in-memory transport, where the network is not the point. The same
 * per-request servers the HTTP controller serves (`McpServers`), built for a caller authenticated from a real
 * credential, spoken to by the official client: the discovery tools (G3 search, G4 get_tool), argument refusals in
 * the shared error shape (G7), and the G9 refused-call limit. The 2026-07-28 envelope and headers belong to HTTP and
 * stay in the mcp-eras e2e.
 */
import { randomUUID } from 'node:crypto';
import { type INestApplicationContext, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { type CallToolResult } from '@modelcontextprotocol/client';
import { type CatalogToolChangedPayload } from '@tollgate/contracts';
import { EventTransportModule, PostgresLogTransport } from '@tollgate/messaging';
import { createLogger, HealthModule } from '@tollgate/observability';
import { createTestDatabase } from '@tollgate/testing';
import { ManageIdentitiesUseCase } from '../src/lib/admin/manage-identities.usecase';
import { AuthenticateUseCase } from '../src/lib/authenticate/authenticate.usecase';
import { CatalogIndex } from '../src/lib/catalog/catalog-index.service';
import { GATEWAY } from '../src/lib/gateway.constants';
import { GatewayModule } from '../src/lib/gateway.module';
import { McpServers } from '../src/lib/mcp/mcp-servers';
import { SyncCatalogUseCase } from '../src/lib/sync-catalog/sync-catalog.usecase';
import { getDataSourceToken } from '@nestjs/typeorm';
import { type DataSource } from 'typeorm';

jest.setTimeout(120_000);

const tool = (name: string, over: Partial<CatalogToolChangedPayload> = {}): CatalogToolChangedPayload => ({
  toolId: name, name, status: 'active', version: 1, contractHash: 'a'.repeat(64), retiredVersions: [], kind: 'read', category: 'text', tags: ['text'],
  summary: `${name.replace(/_/g, ' ')} of a text`, description: `Returns the ${name.replace(/_/g, ' ')} of the given text.`,
  inputSchema: { type: 'object', properties: { text: { type: 'string', maxLength: 100 } }, required: ['text'], additionalProperties: false },
  optionalInputFields: [], optionalOutputFields: [], examples: [], changelog: [], notReviewed: false, tier: 'standard',
  price: { amountMinor: '10', asset: 'USDC' }, assetDecimals: 6, ...over,
  bindings: [{ bindingId: `b-${name}`, providerId: 'text-tools', transport: 'http', endpoint: 'http://127.0.0.1:1/mcp', upstreamToolName: name, contractHash: 'a'.repeat(64), health: 'healthy' }],
});

describe('the MCP surface over the in-memory transport (medium tier)', () => {
  let db: { url: string; drop(): Promise<void> };
  let app: INestApplicationContext;
  let servers: McpServers;
  let credential: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    db = await createTestDatabase('tollgate_gw_mcp');
    const logger = createLogger('mcp-surface-test', 'silent');
    @Module({
      imports: [
        EventTransportModule.forRoot(new PostgresLogTransport({ databaseUrl: db.url, logger })),
        HealthModule,
        GatewayModule.register({
          databaseUrl: db.url, outboxPollIntervalMs: 1000, adminToken: 'admin', callWaitMs: 1000, callDeadlineMs: 5000, cursorSecret: 'cursor-secret',
          catalogPollMs: 60_000, policyTimeoutMs: 2000, signInTtlMs: 60_000, searchRanking: 'lexical',
        }),
      ],
    })
    class SurfaceTestModule {}
    app = await NestFactory.createApplicationContext(SurfaceTestModule, { logger: false });
    servers = app.get(McpServers);
    const identities = app.get(ManageIdentitiesUseCase);
    const { ownerId } = await identities.createOwner('Surface owner');
    const { agentId } = await identities.createAgent(ownerId, 'Surface agent');
    credential = (await identities.issueCredential(agentId)).credential;
    await identities.createMcpUrl('surface', undefined, { discoveryMode: 'search' });
    const ds = app.get<DataSource>(getDataSourceToken(GATEWAY));
    const sync = app.get(SyncCatalogUseCase);
    for (const t of [tool('word_count'), tool('reverse_text'), tool('old_tool', { status: 'removed' })]) await ds.transaction((m) => sync.execute(m, t));
    await app.get(CatalogIndex).reload();
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await app?.close();
    await db?.drop();
  });

  /** An agent connected in memory to the server its credential gets, in the given era. */
  async function agent(era: 'modern' | 'legacy', as = credential): Promise<Client> {
    const auth = await app.get(AuthenticateUseCase).execute('surface', `Bearer ${as}`, '127.0.0.1');
    if (!auth.ok) throw new Error(`authentication failed: ${auth.code}`);
    const server = servers.build(await servers.callerFor(auth.identity, auth.profile), era);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'surface-test', version: '1.0.0' });
    await client.connect(clientSide);
    clients.push(client);
    return client;
  }
  const errorOf = (r: CallToolResult) => r._meta?.['assay/error'] as { code: string; retryable: boolean; details?: Record<string, unknown> } | undefined;
  const call = (c: Client, name: string, args: Record<string, unknown>) => c.callTool({ name, arguments: args }) as Promise<CallToolResult>;

  it('tools/list in search mode: the discovery tools, never a catalog tool', async () => {
    const c = await agent('legacy');
    expect((await c.listTools()).tools.map((t) => t.name).sort()).toEqual(['call_tool', 'get_tool', 'search_tools']);
  });

  it('search_tools ranks the active catalog tools by their words; a removed tool is never listed (G3)', async () => {
    const c = await agent('legacy');
    const found = await call(c, 'search_tools', { query: 'reverse text' });
    expect(errorOf(found)).toBeUndefined();
    const names = (found.structuredContent as { results: { name: string }[] }).results.map((t) => t.name);
    expect(names[0]).toBe('reverse_text');
    expect(names).not.toContain('old_tool');
  });

  it('get_tool gives the contract and price of an active tool; an unknown or removed one is refused with its code (G4, G7)', async () => {
    const c = await agent('legacy');
    const got = await call(c, 'get_tool', { name: 'word_count' });
    expect(got.structuredContent).toMatchObject({ name: 'word_count', price: { amountMinor: '10', asset: 'USDC' }, inputSchema: { required: ['text'] } });
    for (const name of ['old_tool', 'no_such_tool']) {
      const refused = await call(c, 'get_tool', { name });
      expect(refused.isError).toBe(true);
      expect(errorOf(refused)).toMatchObject({ code: expect.stringMatching(/^TOOL_/), retryable: false });
    }
  });

  it('call_tool with arguments its contract refuses: TOOL_ARGUMENTS_INVALID in the shared shape, nothing recorded', async () => {
    const c = await agent('legacy');
    const refused = await call(c, 'call_tool', { name: 'word_count', arguments: { text: 42 } });
    expect(refused.isError).toBe(true);
    expect(errorOf(refused)).toMatchObject({ code: 'TOOL_ARGUMENTS_INVALID', retryable: false });
    const ds = app.get<DataSource>(getDataSourceToken(GATEWAY));
    expect(await ds.query('SELECT count(*)::int AS n FROM gateway.call')).toEqual([{ n: 0 }]);
  });

  it('G9: past 60 refused calls in a minute every call is RATE_LIMITED with a retry time', async () => {
    // The count is per calendar minute: start early in one, so the whole run falls in it.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 30_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 100));
    // A fresh agent: the count is per agent, and the other tests' refusals are the first agent's.
    const identities = app.get(ManageIdentitiesUseCase);
    const { ownerId } = await identities.createOwner('G9 owner');
    const { agentId } = await identities.createAgent(ownerId, 'G9 agent');
    const c = await agent('legacy', (await identities.issueCredential(agentId)).credential);
    const answers: { code?: string; retryAfterMs?: number }[] = [];
    for (let i = 0; i < 62; i++) answers.push(errorOf(await call(c, 'call_tool', { name: `missing_${randomUUID().slice(0, 8)}` })) ?? {});
    expect(answers.slice(0, 60).every((a) => a.code === 'TOOL_NOT_FOUND' || a.code === 'TOOL_NOT_IN_TOOLSET')).toBe(true);
    expect(answers.slice(60)).toEqual([expect.objectContaining({ code: 'RATE_LIMITED', retryAfterMs: expect.any(Number) }), expect.objectContaining({ code: 'RATE_LIMITED' })]);
  });
});
