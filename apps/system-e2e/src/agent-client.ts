import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, startProcess, startTsProcess, type RunningProcess, waitFor, WORKSPACE_ROOT } from '@tollgate/testing';

/** An agent as a real MCP client (the official SDK) over Streamable HTTP with its bearer credential. */
export async function connectAgent(mcpUrl: string, credential: string): Promise<Client> {
  const client = new Client({ name: 'e2e-agent', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${credential}` } } }));
  return client;
}

/**
 * An agent on the current protocol: the official SDK v2 client pinned to 2026-07-28 — no
 * `initialize`, `server/discover` first, the `_meta` envelope and `Mcp-Method` headers on every request, and no
 * fallback to the 2025 handshake.
 */
export async function connectModernAgent(mcpUrl: string, credential: string): Promise<ModernClient> {
  const client = new ModernClient({ name: 'e2e-agent-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
  await client.connect(new ModernTransport(new URL(mcpUrl), { requestInit: { headers: { Authorization: `Bearer ${credential}` } } }));
  return client;
}

/** What a test needs of an agent, whichever era its client speaks. */
export interface AgentClient {
  callTool(params: { name: string; arguments?: Record<string, unknown>; _meta?: Record<string, unknown> }, schema?: undefined, options?: ProgressOptions): Promise<unknown>;
}

/** A request's progress handler, as both eras' clients take it (the client sends the progressToken). */
export interface ProgressOptions {
  onprogress: (p: { progress: number; total?: number; message?: string }) => void;
}

/** call_tool, retried only while the catalog read model has not yet seen the tool. */
export async function callToolWhenListed(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return waitFor(`tool ${name} to be callable`, async () => {
    const r = (await client.callTool({ name: 'call_tool', arguments: { name, arguments: args } })) as CallToolResult;
    const code = (r._meta?.['assay/error'] as { code?: string } | undefined)?.code;
    return code === 'TOOL_NOT_IN_TOOLSET' ? undefined : r;
  }, 30_000, 300);
}

/** `@modelcontextprotocol/server-everything` over Streamable HTTP: the real upstream of the call. */
export function startEverythingServer(port: number): RunningProcess {
  const entry = path.join(WORKSPACE_ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
  return startProcess('server-everything', process.execPath, [entry, 'streamableHttp'], { PORT: String(port) });
}

export async function postJson(url: string, body: unknown, token: string): Promise<{ status: number; json: Record<string, unknown> }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

export interface Timeline {
  status: string;
  contradictions: string[];
  timeline: { type: string; producer: string; occurredAt: string; eventId: string; details?: Record<string, unknown> }[];
}

/** `callsUrl` is the ledger's `/calls` endpoint; `token` a finance or operator token (or the ledger's admin token). */
export async function timelineWhen(callsUrl: string, intentId: string, done: (t: Timeline) => boolean, token: string): Promise<Timeline> {
  return waitFor(`ledger timeline of ${intentId}`, async () => {
    const res = await fetch(`${callsUrl}/${intentId}`, { headers: { authorization: `Bearer ${token}` } });
    if (res.status !== 200) return undefined;
    const t = (await res.json()) as Timeline;
    return done(t) ? t : undefined;
  }, 30_000, 200);
}

/** What one call's ledger timeline must show (B4: three separate durable facts). */
export function expectThreeSeparateFacts(t: Timeline): void {
  const one = (type: string) => {
    const entries = t.timeline.filter((e) => e.type === type);
    expect(entries).toHaveLength(1);
    return entries[0]!;
  };
  const requested = one('CallRequested');
  const held = one('PaymentHeld');
  const dispatched = one('CallDispatched');
  const received = one('ResultReceived');
  const confirmed = one('EffectConfirmed');
  expect(requested.producer).toBe('gateway');
  expect(held.producer).toBe('payment');
  for (const e of [dispatched, received, confirmed]) expect(e.producer).toBe('execution');
  expect(new Set([dispatched.eventId, received.eventId, confirmed.eventId]).size).toBe(3);
  const at = (e: { occurredAt: string }) => Date.parse(e.occurredAt);
  expect(at(requested)).toBeLessThanOrEqual(at(held));
  expect(at(held)).toBeLessThanOrEqual(at(dispatched));
  expect(at(dispatched)).toBeLessThanOrEqual(at(received));
  expect(at(received)).toBeLessThanOrEqual(at(confirmed));
  expect(t.contradictions).toEqual([]);
}

/** `_meta["assay/error"]` of a tool result (G7). */
export interface AgentErrorMeta {
  code: string;
  retryable: boolean;
  message?: string;
  retryAfter?: number;
  retryAfterMs?: number;
  intentId?: string;
  details?: Record<string, unknown>;
}

export const errorOf = (r: CallToolResult) => r._meta?.['assay/error'] as AgentErrorMeta | undefined;

/** `_meta["assay/receipt"]` of a tool result (G5.3). */
export const receiptOf = (r: CallToolResult) =>
  r._meta?.['assay/receipt'] as {
    intentId: string; providerId: string; toolId: string; attempts: number; fellBack?: boolean; status: string;
    held: ReceiptAmount; charged: ReceiptAmount;
  } | undefined;

export interface ReceiptAmount { asset: string; amountMinor: string; display: string }

/** call_tool as an agent sends it, with an operation key (and any other request metadata, e.g. an x402 payment) in the request `_meta`. */
export async function callThrough(
  c: AgentClient, name: string, args: Record<string, unknown>, key?: string, meta: Record<string, unknown> = {}, progress?: ProgressOptions,
): Promise<CallToolResult> {
  const all = { ...(key !== undefined ? { 'assay/idempotencyKey': key } : {}), ...meta };
  return (await c.callTool({ name: 'call_tool', arguments: { name, arguments: args }, ...(Object.keys(all).length > 0 ? { _meta: all } : {}) }, undefined, progress)) as CallToolResult;
}

/** Runs an ops CLI of `tools/ops` as an operator would; its exit code and what it printed. */
export async function runOpsCli(name: string, script: string, args: string[]): Promise<{ code: number | null; out: string }> {
  const p = startTsProcess(name, script, args);
  const code = await new Promise<number | null>((resolve) => p.child.once('exit', resolve));
  return { code, out: p.output() };
}

/** A running embedded system (`npm start`) on free ports and its own data folder, as the new suites use it. */
export interface EmbeddedSystem {
  process: RunningProcess;
  base: string;
  adminToken: string;
  /** The embedded PostgreSQL (user postgres/postgres, database tollgate). */
  pgUrl: string;
  /** What `npm start` wrote to demo.json (URLs, the demo credential, tokens). */
  demo: Record<string, string>;
  /** Its DATA_DIR (demo.json, the embedded PostgreSQL). */
  dataDir: string;
  stop(): Promise<void>;
}

export async function startEmbeddedSystem(name: string, env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<EmbeddedSystem> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), `tollgate-${name}-`));
  chmodSync(dataDir, 0o755); // the embedded engine runs PostgreSQL as its own user
  const [port, pgPort] = [await freePort(), await freePort()];
  const proc = startTsProcess('embedded', 'apps/embedded/src/main.ts', [], { PORT: String(port), EMBEDDED_PG_PORT: String(pgPort), DATA_DIR: dataDir, LOG_LEVEL: 'warn', DEMO_MONEY: 'false', ...env }, { nodeArgs });
  await proc.waitForOutput(/Tollgate is running/, 150_000);
  return {
    process: proc, dataDir, base: `http://127.0.0.1:${port}`, pgUrl: `postgres://postgres:postgres@127.0.0.1:${pgPort}/tollgate`,
    adminToken: (JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as { adminToken: string }).adminToken,
    demo: JSON.parse(readFileSync(path.join(dataDir, 'demo.json'), 'utf8')) as Record<string, string>,
    async stop() {
      await proc.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/**
 * An owner with a funded USDC wallet, one agent connected to a new search-mode URL, and `reverse_text` priced — what
 * the finance and ops suites pay with. Resolves once the price is in the agent's catalog.
 */
export async function payingAgentOnEmbedded(system: EmbeddedSystem, opts: { slug: string; priceMinor: string; depositMinor: string }): Promise<{ ownerId: string; agent: Client }> {
  const { base, adminToken: admin } = system;
  const ownerId = (await postJson(`${base}/admin/owners`, { name: opts.slug }, admin)).json['ownerId'] as string;
  const agentId = (await postJson(`${base}/admin/owners/${ownerId}/agents`, { name: 'a' }, admin)).json['agentId'] as string;
  const credential = (await postJson(`${base}/admin/agents/${agentId}/credentials`, {}, admin)).json['credential'] as string;
  await postJson(`${base}/admin/mcp-urls`, { slug: opts.slug, discoveryMode: 'search' }, admin);
  await fetch(`${base}/admin/tools/reverse_text`, { method: 'PATCH', headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` }, body: JSON.stringify({ priceMinor: opts.priceMinor, asset: 'USDC' }) });
  await postJson(`${base}/admin/owners/${ownerId}/deposits`, { reference: `${opts.slug}-1`, amount: { amountMinor: opts.depositMinor, asset: 'USDC' } }, admin);
  const agent = await connectAgent(`${base}/mcp/${opts.slug}`, credential);
  await waitFor('the price in the catalog', async () => {
    const r = (await agent.callTool({ name: 'get_tool', arguments: { name: 'reverse_text' } })) as CallToolResult;
    return !errorOf(r) && (r.structuredContent as { price: unknown }).price !== null;
  }, 60_000, 300);
  return { ownerId, agent };
}

/** Limits count per fixed UTC minute: a test that fills one waits, when the minute is far along, for the next to start. */
export async function atStartOfMinuteWindow(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 40_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 50));
}
