/**
 * An MPP-paying agent in its own process (mppx ships ES modules only, which the e2e tests' jest runtime cannot load):
 * the MCP SDK client of either era, wrapped by mppx's own MCP client (`mppx/mcp-sdk/client`), which pays a
 * PAYMENT_REQUIRED's `_meta["org.paymentauth/payment-required"]` challenge with the sandbox method and retries.
 *
 * argv[2]: JSON `{ url, bearer, era: 'classic' | 'modern', token, steps }`; prints one JSON line `{ results }`. Steps:
 * - `{ kind: 'pay', tool, args, key, meta? }` — a call paid by mppx when the gateway asks (the receipt with the result);
 * - `{ kind: 'credential', tool, args, key }` — asks, and returns a paid credential (serialized) for the challenge;
 * - `{ kind: 'send', tool, args, key, credential, via?: 'meta' | 'header', meta? }` — sends that credential itself;
 * - `{ kind: 'mint', secretKey, realm, expires, amount, currency }` — a credential for a challenge minted elsewhere.
 */
import type * as MppxCore from 'mppx' with { 'resolution-mode': 'import' };
import type * as MppxMcp from 'mppx/mcp-sdk/client' with { 'resolution-mode': 'import' };
import type * as MppxServer from 'mppx/server' with { 'resolution-mode': 'import' };
import { Client as ModernClient, StreamableHTTPClientTransport as ModernTransport } from '@modelcontextprotocol/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SANDBOX_METHOD, sandboxMethods } from '@tollgate/contracts';

/* eslint-disable @typescript-eslint/no-require-imports */
const { Credential, Method } = require('mppx') as typeof MppxCore;
const { McpClient } = require('mppx/mcp-sdk/client') as typeof MppxMcp;
const { Mppx, Transport } = require('mppx/server') as typeof MppxServer;
/* eslint-enable @typescript-eslint/no-require-imports */

type Step = { kind: string; tool?: string; args?: Record<string, unknown>; key?: string; meta?: Record<string, unknown>; credential?: string; via?: string } & Record<string, unknown>;
interface Plan { url: string; bearer: string; era: 'classic' | 'modern'; token: string; steps: Step[] }
type Caller = { callTool(params: { name: string; arguments: Record<string, unknown>; _meta?: Record<string, unknown> }): Promise<unknown> };

async function connect(plan: Plan, headers: Record<string, string> = {}): Promise<Caller & { close(): Promise<void> }> {
  const requestInit = { headers: { Authorization: `Bearer ${plan.bearer}`, ...headers } };
  if (plan.era === 'modern') {
    const c = new ModernClient({ name: 'mpp-agent-2026', version: '1.0.0' }, { versionNegotiation: { mode: { pin: '2026-07-28' } } });
    await c.connect(new ModernTransport(new URL(plan.url), { requestInit }));
    return c as unknown as Caller & { close(): Promise<void> };
  }
  const c = new Client({ name: 'mpp-agent', version: '1.0.0' });
  await c.connect(new StreamableHTTPClientTransport(new URL(plan.url), { requestInit }));
  return c as unknown as Caller & { close(): Promise<void> };
}

/** The payer's side of the sandbox method: a credential is the challenge and the payer's token. */
function payingMethods(token: string) {
  const m = sandboxMethods();
  const createCredential = async ({ challenge }: { challenge: MppxCore.Challenge.Challenge }) => Credential.serialize(Credential.from({ challenge, payload: { token } }));
  return [Method.toClient(m.charge, { createCredential }), Method.toClient(m.authorize, { createCredential })];
}

const call = (tool: string, args: Record<string, unknown>, key: string, meta: Record<string, unknown> = {}) =>
  ({ name: 'call_tool', arguments: { name: tool, arguments: args }, _meta: { 'assay/idempotencyKey': key, ...meta } });

async function run(plan: Plan, client: Caller, s: Step): Promise<unknown> {
  const tool = s.tool ?? '';
  const args = s.args ?? {};
  const key = s.key ?? '';
  if (s.kind === 'pay') return McpClient.wrap(client as never, { methods: payingMethods(plan.token) }).callTool(call(tool, args, key, s.meta) as never);
  if (s.kind === 'credential') {
    const asked = (await client.callTool(call(tool, args, key))) as { _meta?: Record<string, { challenges: MppxCore.Challenge.Challenge[] }> };
    const challenge = asked._meta?.['org.paymentauth/payment-required']?.challenges[0];
    return { asked, credential: challenge ? Credential.serialize(Credential.from({ challenge, payload: { token: plan.token } })) : null };
  }
  if (s.kind === 'send') {
    const credential = Credential.deserialize(String(s.credential));
    if (s.via === 'header') {
      const viaHeader = await connect(plan, { 'Payment-Authorization': String(s.credential) });
      try {
        return await viaHeader.callTool(call(tool, args, key, s.meta));
      } finally {
        await viaHeader.close();
      }
    }
    return client.callTool(call(tool, args, key, { 'org.paymentauth/credential': credential, ...s.meta }));
  }
  if (s.kind === 'mint') {
    const methods = sandboxMethods();
    const server = Method.toServer(methods.charge, { verify: async () => { throw new Error('never verified here'); } });
    const other = Mppx.create({ methods: [server], realm: String(s['realm']), secretKey: String(s['secretKey']), transport: Transport.mcp() });
    const challenge = await other.challenge[SANDBOX_METHOD].charge({ amount: String(s['amount']), currency: String(s['currency']), recipient: String(s['realm']), expires: String(s['expires']) });
    return { credential: Credential.serialize(Credential.from({ challenge, payload: { token: plan.token } })) };
  }
  throw new Error(`unknown step ${s.kind}`);
}

async function main(): Promise<void> {
  const plan = JSON.parse(process.argv[2] ?? '{}') as Plan;
  const client = await connect(plan);
  const results: unknown[] = [];
  try {
    // A JSON-RPC error (MPP's -32043, say) is a result too: its code and data, as the agent sees them.
    for (const s of plan.steps) results.push(await run(plan, client, s).catch((e: unknown) => ({ thrown: e instanceof Error ? e.message : String(e), code: (e as { code?: unknown }).code, data: (e as { data?: unknown }).data })));
  } finally {
    await client.close();
  }
  process.stdout.write(`${JSON.stringify({ results })}\n`);
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
