/**
 * What a new user gets from `npm start` — a funded demo wallet, priced tools beside free ones, a
 * writing tool that confirms its effect by read-back, a search-mode URL, a finance token and the console URL, printed
 * and written to demo.json. The README's five-minute walkthrough, run as a test: one paid call and its receipt, a paid
 * write confirmed by read-back, the call's timeline through the finance API, a replay with verify.
 */
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { waitFor } from '@tollgate/testing';
import { callThrough, connectAgent, type EmbeddedSystem, errorOf, receiptOf, runOpsCli, startEmbeddedSystem } from './agent-client';

jest.setTimeout(240_000);

describe('npm start: the demo', () => {
  let system: EmbeddedSystem;
  let agent: Client;

  beforeAll(async () => {
    system = await startEmbeddedSystem('demo', { DEMO_MONEY: 'true', SETTLEMENT_VERIFICATION_WINDOW_MS: '200' });
    agent = await connectAgent(system.demo['mcpUrl']!, system.demo['credential']!);
  });
  afterAll(async () => {
    await agent?.close();
    await system?.stop();
  });

  it('prints the console URL and the finance token, and writes them to demo.json', () => {
    const out = system.process.output();
    expect(out).toContain(`Console:        ${system.base}/console  (finance token: ${system.demo['financeToken']})`);
    expect(out).toMatch(/Wallet: {9}100\.00 USDC; reverse_text costs 0\.25 USDC, create_review_ticket 1\.00 USDC/);
    expect(system.demo).toMatchObject({ consoleUrl: `${system.base}/console`, searchMcpUrl: `${system.base}/mcp/demo-search` });
    expect(out).toContain(`Operator token: ${system.demo['operatorToken']}`);
    expect(system.demo['operatorToken']).not.toBe(system.demo['financeToken']);
  });

  it('the finance token is a finance role, the operator token an operator', async () => {
    const byKey = (token: string) => fetch(`${system.base}/calls?operationKey=demo-1`, { headers: { authorization: `Bearer ${token}` } });
    expect((await byKey(system.demo['financeToken']!)).status).toBe(403);
    expect((await byKey(system.demo['operatorToken']!)).status).toBe(200);
  });

  it('walks through a paid call, a paid write confirmed by read-back, the timeline and a replay with verify', async () => {
    await waitFor('the priced tools in the catalog', async () => {
      const r = (await agent.callTool({ name: 'get_tool', arguments: { name: 'create_review_ticket' } })) as CallToolResult;
      return !errorOf(r) && (r.structuredContent as { price: unknown }).price !== null;
    }, 60_000, 300);
    const paid = (await callThrough(agent, 'reverse_text', { text: 'hello' }, 'demo-1')) as CallToolResult;
    expect(errorOf(paid)).toBeUndefined();
    expect(receiptOf(paid)).toMatchObject({ held: { amountMinor: '250000', asset: 'USDC', display: '0.25 USDC' } });
    const free = (await callThrough(agent, 'word_count', { text: 'one two three' }, 'demo-2')) as CallToolResult;
    expect(errorOf(free)).toBeUndefined();
    const write = (await callThrough(agent, 'create_review_ticket', { source_id: 'doc-1', title: 'Demo ticket' }, 'demo-3')) as CallToolResult;
    expect(errorOf(write)).toBeUndefined();
    expect(receiptOf(write)).toMatchObject({ held: { amountMinor: '1000000' } });
    const token = system.demo['financeToken']!;
    const timeline = async () => (await (await fetch(`${system.base}/calls/${receiptOf(write)!.intentId}`, { headers: { authorization: `Bearer ${token}` } })).json()) as { status: string; timeline: { type: string; details: Record<string, unknown> }[] };
    await waitFor('the write settled', async () => (await timeline()).status === 'settled', 60_000, 300);
    const confirmed = (await timeline()).timeline.find((t) => t.type === 'EffectConfirmed');
    expect(confirmed?.details).toMatchObject({ method: 'read_back' });
    const replay = await runOpsCli('tollgate-ops', 'tools/ops/src/tollgate-ops.ts', ['replay', '--database-url', system.pgUrl, '--verify', '--json']);
    expect(replay.code).toBe(0);
    expect(replay.out).toContain('"differences": []');
  });

  it('runs the README\'s operation-key step literally: the retry with its _meta returns the same receipt and charges once (B5)', async () => {
    const readme = readFileSync(path.join(__dirname, '../../../README.md'), 'utf8');
    const step = readme.slice(readme.indexOf('### Five minutes with the demo'));
    const metaText = /Add `_meta: (\{[^`]*\})`/.exec(step)?.[1];
    expect(metaText).toBeDefined();
    const meta = JSON.parse(metaText!) as Record<string, unknown>;
    // What the owner can still spend (a hold moves money out of it; its later capture does not).
    const wallet = async () => ((await (await fetch(`${system.base}/admin/owners/${system.demo['ownerId']}/wallet`, { headers: { authorization: `Bearer ${system.adminToken}` } })).json()) as { balances: { asset: string; available: string }[] })
      .balances.find((b) => b.asset === 'USDC')?.available;
    const before = await wallet();
    const first = (await agent.callTool({ name: 'reverse_text', arguments: { text: 'hello' }, _meta: meta })) as CallToolResult;
    expect(errorOf(first)).toBeUndefined();
    const afterFirst = await wallet();
    expect(BigInt(before!) - BigInt(afterFirst!)).toBe(250_000n);
    const retry = (await agent.callTool({ name: 'reverse_text', arguments: { text: 'hello' }, _meta: meta })) as CallToolResult;
    expect(errorOf(retry)).toBeUndefined();
    expect(receiptOf(retry)?.intentId).toBe(receiptOf(first)?.intentId);
    expect(retry._meta?.['assay/replayed']).toBe(true);
    expect(await wallet()).toBe(afterFirst);
    // The name the README used to give is refused, not ignored.
    const other = (await agent.callTool({ name: 'reverse_text', arguments: { text: 'hello' }, _meta: { operationKey: 'my-key-1' } })) as CallToolResult;
    expect(errorOf(other)).toMatchObject({ code: 'MCP_IDEMPOTENCY_KEY_INVALID', retryable: false });
    expect(await wallet()).toBe(afterFirst);
  });

  it('the search-mode URL finds the writing tool by what it does', async () => {
    const search = await connectAgent(system.demo['searchMcpUrl']!, system.demo['credential']!);
    try {
      const r = (await search.callTool({ name: 'search_tools', arguments: { query: 'review ticket' } })) as CallToolResult;
      expect(JSON.stringify(r.structuredContent)).toContain('create_review_ticket');
    } finally {
      await search.close();
    }
  });
});
