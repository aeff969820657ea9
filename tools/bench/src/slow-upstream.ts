/**
 * The slow-upstream round of the backbone benchmark: real providers take 100 ms to minutes, so a round where the
 * upstream answers in SLOW_UPSTREAM_MS (slow_echo of the sample providers' slow-tools, priced) with 16 agents, beside
 * the direct figure of the same calls. The budget is ≥ 60 paid calls/s in both modes; the ideal, 16 / 0.2 s = 80.
 */
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { waitFor } from '@tollgate/testing';
import { measure, type Stats } from './bench-stats';
import { AGENTS, mcp, PRICE_MINOR, send, type Target } from './bench-system';

export const SLOW_UPSTREAM_MS = 200;
const SLOW_CALLS = 640;

async function callSlow(c: Client, i: number, paid: boolean): Promise<void> {
  const args = { message: `slow ${i}`, delayMs: SLOW_UPSTREAM_MS };
  const r = (await (paid ? c.callTool({ name: 'call_tool', arguments: { name: 'slow_echo', arguments: args } }) : c.callTool({ name: 'slow_echo', arguments: args }))) as CallToolResult;
  if (r.isError) throw new Error(`slow call failed: ${JSON.stringify(r._meta ?? r.content)}`);
  // Held while verifying, or already charged when the answer came after the settlement.
  const receipt = r._meta?.['assay/receipt'] as { held?: { amountMinor?: string }; charged?: { amountMinor?: string } } | undefined;
  if (paid && receipt?.held?.amountMinor !== PRICE_MINOR && receipt?.charged?.amountMinor !== PRICE_MINOR) throw new Error(`not a paid call: ${JSON.stringify(r._meta)}`);
}

/** 16 agents calling a 200 ms upstream through the gateway, and 16 direct clients calling it straight. */
export async function slowUpstreamRound(t: Target, agents: Client[]): Promise<{ upstreamMs: number; direct: Stats; gateway: Stats }> {
  const slowUrl = t.upstream.replace('/text-tools/', '/slow-tools/');
  await send('POST', `${t.urls.discovery}/admin/providers`, { providerId: 'bench-slow', endpoint: slowUrl }, t.admin);
  await send('PATCH', `${t.urls.discovery}/admin/tools/slow_echo`, { priceMinor: PRICE_MINOR, asset: 'USDC', freeCallsPerDay: 0 }, t.admin);
  await waitFor('paid slow_echo callable', async () => Promise.all(agents.map((a, i) => callSlow(a, i, true))).then(() => true, () => false), 90_000, 1000);
  const directs = await Promise.all(Array.from({ length: AGENTS }, () => mcp(slowUrl, t.upstreamToken)));
  const direct = await measure(SLOW_CALLS, AGENTS, (i) => callSlow(directs[i % AGENTS]!, i, false));
  const gateway = await measure(SLOW_CALLS, AGENTS, (i) => callSlow(agents[i % AGENTS]!, i, true));
  await Promise.all(directs.map((c) => c.close()));
  return { upstreamMs: SLOW_UPSTREAM_MS, direct, gateway };
}
