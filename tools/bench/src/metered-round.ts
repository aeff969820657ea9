/**
 * The metered round of the backbone benchmark: the same sequential paid call priced fixed and priced by use, one after
 * the other on one agent, each with its statements, commits and CPU per call (net of the idle rate), so the budget "a
 * metered call costs no more than a fixed-price call" is read off one run. The metered call is summarize_text (the
 * sample provider reports its usage), held at 10 minor units and charged by the characters read.
 */
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { waitFor } from '@tollgate/testing';
import { measure } from './bench-stats';
import { callGateway, counters, perCall, send, type Target } from './bench-system';

const CALLS = 200;

async function callMetered(c: Client, i: number): Promise<void> {
  const r = (await c.callTool({ name: 'call_tool', arguments: { name: 'summarize_text', arguments: { text: `Metered ${i}. One two three.` } } })) as CallToolResult;
  if (r.isError) throw new Error(`metered call failed: ${JSON.stringify(r._meta)}`);
  const receipt = r._meta?.['assay/receipt'] as { held?: { amountMinor?: string }; usage?: { units?: string } } | undefined;
  if (!receipt?.usage) throw new Error(`not a metered call: ${JSON.stringify(r._meta)}`);
}

async function round(t: Target, idle: Parameters<typeof perCall>[2], one: (i: number) => Promise<void>) {
  const before = await counters(t);
  const stats = await measure(CALLS, 1, one);
  await new Promise((r) => setTimeout(r, 3000)); // settlement and the ledger finish the round's calls
  return { p50Ms: stats.p50Ms, p99Ms: stats.p99Ms, ...perCall(before, await counters(t), idle, CALLS) };
}

/** Fixed (word_count) and metered (summarize_text) sequential rounds on one agent, back to back. */
export async function meteredRound(t: Target, [fixedAgent, meteredAgent]: [Client, Client], idle: Parameters<typeof perCall>[2]) {
  const endpoint = t.upstream.replace('/text-tools/', '/summaries/');
  await send('POST', `${t.urls.discovery}/admin/providers`, { providerId: 'bench-summaries', endpoint }, t.admin);
  await send('PATCH', `${t.urls.discovery}/admin/tools/summarize_text`, { asset: 'USDC', freeCallsPerDay: 0, metered: { unit: '100_chars', unitPriceMinor: '1', minimumMinor: '1', maximumMinor: '10' } }, t.admin);
  await waitFor('metered summarize_text callable', async () => callMetered(meteredAgent, -1).then(() => true, () => false), 90_000, 1000);
  for (let i = 0; i < 20; i++) await callMetered(meteredAgent, i); // warm-up
  // One agent each: the per-agent call rate (G9) counts every call of the minute.
  const fixed = await round(t, idle, (i) => callGateway(fixedAgent, 5_000_000 + i));
  const metered = await round(t, idle, (i) => callMetered(meteredAgent, i));
  return { calls: CALLS, fixed, metered };
}
