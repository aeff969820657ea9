/**
 * Issue 2, point 7: the embedded default (one process, the event log in PostgreSQL,
 * embedded PostgreSQL) serves the same call as the distributed system.
 */
import { readFileSync } from 'node:fs';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { freePort, type RunningProcess, startTsProcess } from '@tollgate/testing';
import { callToolWhenListed, connectAgent, expectThreeSeparateFacts, postJson, startEverythingServer, timelineWhen } from './agent-client';

jest.setTimeout(180_000);

describe('embedded mode (npm start): one call end to end', () => {
  let system: RunningProcess;
  let everything: RunningProcess;
  let dataDir: string;
  let demo: { mcpUrl: string; credential: string; ledgerUrl: string; adminToken: string };
  let agent: Client;
  let base: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-embedded-'));
    chmodSync(dataDir, 0o755); // the embedded engine runs PostgreSQL as its own user
    const [port, pgPort, everythingPort] = [await freePort(), await freePort(), await freePort()];
    everything = startEverythingServer(everythingPort);
    system = startTsProcess('embedded', 'apps/embedded/src/main.ts', [], { PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), DATA_DIR: dataDir, SETTLEMENT_VERIFICATION_WINDOW_MS: '200' });
    await system.waitForOutput(/Tollgate is running/, 120_000);
    await everything.waitForOutput(/listening on port/i, 30_000);
    demo = JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8'));
    base = `http://127.0.0.1:${port}`;
    const reg = await postJson(`${base}/admin/providers`, { providerId: 'everything', endpoint: `http://127.0.0.1:${everythingPort}/mcp` }, demo.adminToken);
    expect(reg.status).toBe(201);
    agent = await connectAgent(demo.mcpUrl, demo.credential);
  });

  afterAll(async () => {
    await agent?.close();
    await system?.stop();
    await everything?.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('writes the MCP URL, credential and ledger URL to data/demo.json', () => {
    expect(demo.mcpUrl).toBe(`${base}/mcp/demo`);
    expect(demo.credential).toMatch(/^tg_/);
    expect(demo.ledgerUrl).toBe(`${base}/calls`);
  });

  it('calls server-everything echo through call_tool and returns its content unchanged, with three separate facts in the ledger', async () => {
    const result = await callToolWhenListed(agent, 'echo', { message: 'hello from embedded' });
    expect(result.isError).toBeFalsy();
    expect(result.content).toEqual([{ type: 'text', text: 'Echo: hello from embedded' }]);
    const receipt = result._meta?.['assay/receipt'] as { intentId: string; providerId: string; attempts: number; toolId: string };
    expect(receipt).toMatchObject({ providerId: 'everything', attempts: 1, toolId: 'echo' });
    const t = await timelineWhen(demo.ledgerUrl, receipt.intentId, (x) => x.status === 'settled', demo.adminToken);
    expectThreeSeparateFacts(t);
  });

  it('serves the demo provider tool with its structured content', async () => {
    const result = await callToolWhenListed(agent, 'word_count', { text: 'one two three' });
    expect(result.structuredContent).toEqual({ words: 3, characters: 13 });
  });

  it('refuses a bad credential and an unknown URL with the spec codes', async () => {
    const bad = await fetch(demo.mcpUrl, { method: 'POST', headers: { authorization: 'Bearer tg_wrong', 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    expect(bad.status).toBe(401);
    expect(((await bad.json()) as { error: { data: { code: string } } }).error.data.code).toBe('MCP_CREDENTIAL_INVALID');
    const none = await fetch(`${base}/mcp/no-such-url`, { method: 'POST', headers: { authorization: `Bearer ${demo.credential}`, 'content-type': 'application/json' }, body: '{}' });
    expect(none.status).toBe(404);
    expect(((await none.json()) as { error: { message: string; data: { code: string } } }).error).toMatchObject({ message: 'No MCP server at this URL', data: { code: 'MCP_URL_NOT_FOUND' } });
  });

  it('answers an unknown catalog tool with TOOL_NOT_IN_TOOLSET in the shared error shape', async () => {
    const r = await agent.callTool({ name: 'call_tool', arguments: { name: 'no_such_tool', arguments: {} } });
    expect(r.isError).toBe(true);
    expect(r._meta?.['assay/error']).toMatchObject({ code: 'TOOL_NOT_IN_TOOLSET', retryable: false });
  });
});
