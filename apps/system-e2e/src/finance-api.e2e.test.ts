/**
 * Through the running embedded system: a funded owner's paid call shows in the journal (filters,
 * cursor pages), the CSV export and the statement, which agree with the balances; owner-limited tokens stay in their
 * owner; bad cursors and periods get the shared refusal shape.
 */
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { waitFor } from '@tollgate/testing';
import { callThrough, connectAgent, type EmbeddedSystem, errorOf, postJson, receiptOf, startEmbeddedSystem } from './agent-client';

jest.setTimeout(180_000);

interface Entry { occurredAt: string; postingId: string; seq: number; kind: string; intentId: string | null; account: string; asset: string; amountMinor: string }

describe('finance API: journal, CSV, statements', () => {
  let system: EmbeddedSystem;
  let base: string;
  let admin: string;
  let ownerA: string;
  let ownerB: string;
  let agent: Client;
  let intentId: string;
  const tokens: Record<'all' | 'a' | 'b', string> = { all: '', a: '', b: '' };
  const startedAt = new Date(Date.now() - 60_000).toISOString();

  const get = (p: string, token: string) => fetch(`${base}${p}`, { headers: { authorization: `Bearer ${token}` } });
  const json = async (p: string, token: string) => (await (await get(p, token)).json()) as Record<string, unknown>;

  beforeAll(async () => {
    system = await startEmbeddedSystem('finance', { SETTLEMENT_VERIFICATION_WINDOW_MS: '200' });
    admin = system.adminToken;
    base = system.base;
    ownerA = (await postJson(`${base}/admin/owners`, { name: 'A' }, admin)).json['ownerId'] as string;
    ownerB = (await postJson(`${base}/admin/owners`, { name: 'B' }, admin)).json['ownerId'] as string;
    const agentId = (await postJson(`${base}/admin/owners/${ownerA}/agents`, { name: 'a' }, admin)).json['agentId'] as string;
    const credential = (await postJson(`${base}/admin/agents/${agentId}/credentials`, {}, admin)).json['credential'] as string;
    await postJson(`${base}/admin/mcp-urls`, { slug: 'fin', discoveryMode: 'search' }, admin);
    await fetch(`${base}/admin/tools/reverse_text`, { method: 'PATCH', headers: { 'content-type': 'application/json', authorization: `Bearer ${admin}` }, body: JSON.stringify({ priceMinor: '100', asset: 'USDC' }) });
    expect((await postJson(`${base}/admin/owners/${ownerA}/deposits`, { reference: 'bank-1', amount: { amountMinor: '1000', asset: 'USDC' } }, admin)).status).toBe(201);
    agent = await connectAgent(`${base}/mcp/fin`, credential);
    await waitFor('the price in the catalog', async () => {
      const r = (await agent.callTool({ name: 'get_tool', arguments: { name: 'reverse_text' } })) as CallToolResult;
      return !errorOf(r) && (r.structuredContent as { price: unknown }).price !== null;
    }, 60_000, 300);
    const paid = (await callThrough(agent, 'reverse_text', { text: 'abc' }, 'fin-1')) as CallToolResult;
    expect(errorOf(paid)).toBeUndefined();
    intentId = receiptOf(paid)!.intentId;
    for (const [k, ownerId] of [['all', undefined], ['a', ownerA], ['b', ownerB]] as const) {
      tokens[k] = (await postJson(`${base}/admin/finance-tokens`, { label: k, ...(ownerId ? { ownerId } : {}) }, admin)).json['token'] as string;
    }
    // Settled: the provider's payable and the platform's revenue are booked too.
    await waitFor('the call settled in the journal', async () => ((await json(`/journal?intentId=${intentId}`, tokens.all))['entries'] as Entry[]).some((e) => e.kind === 'settle'), 60_000, 300);
  });

  afterAll(async () => {
    await agent?.close();
    await system?.stop();
  });

  it('filters the journal by tool, agent and recorded time, and summarises per owner and per provider, amounts readable', async () => {
    const all = (await json(`/journal?intentId=${intentId}`, tokens.all))['entries'] as (Entry & { amount: string })[];
    const byTool = (await json('/journal?tool=reverse_text', tokens.all))['entries'] as Entry[];
    expect(new Set(byTool.map((e) => e.intentId))).toEqual(new Set([intentId]));
    expect(byTool).toHaveLength(all.length);
    expect((await json('/journal?tool=word_count', tokens.all))['entries']).toEqual([]);
    const agentId = ((await json(`/calls/${intentId}`, tokens.all))['timeline'] as { type: string; details: { agentId?: string } }[]).find((t) => t.type === 'CallRequested')!.details.agentId!;
    expect(((await json(`/journal?agentId=${encodeURIComponent(agentId)}`, tokens.all))['entries'] as Entry[]).map((e) => e.postingId).sort()).toEqual(all.map((e) => e.postingId).sort());
    const future = new Date(Date.now() + 3_600_000).toISOString();
    expect((await json(`/journal?recordedFrom=${future}`, tokens.all))['entries']).toEqual([]);
    expect(((await json(`/journal?recordedFrom=${startedAt}&intentId=${intentId}`, tokens.all))['entries'] as Entry[]).length).toBe(all.length);
    // Readable amounts beside the minor units: 100 minor units of USDC are 0.0001.
    const capture = all.find((e) => e.kind === 'capture' && e.account === `owner:${ownerA}:held`)!;
    expect(capture).toMatchObject({ amountMinor: '-100', amount: '-0.0001' });
    const owners = (await json(`/journal/summary?by=owner&from=${startedAt}`, tokens.all))['groups'] as Record<string, unknown>[];
    expect(owners).toEqual(expect.arrayContaining([expect.objectContaining({ ownerId: ownerA, asset: 'USDC', decimals: 6, calls: 1, spent: '100', refunds: '0' })]));
    const providers = (await json(`/journal/summary?by=provider&from=${startedAt}`, tokens.all))['groups'] as Record<string, unknown>[];
    expect(providers).toEqual([expect.objectContaining({ asset: 'USDC', calls: 1, earned: '90' })]);
    const bad = await get('/journal/summary?by=tool', tokens.all);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ code: 'SUMMARY_GROUP_INVALID' });
  });

  it('lists the owner\'s entries with filters, and cursor pages of one walk them all once', async () => {
    const all = (await json(`/journal?ownerId=${ownerA}`, tokens.all))['entries'] as Entry[];
    expect(new Set(all.map((e) => e.kind))).toEqual(new Set(['deposit', 'hold', 'capture']));
    expect(all.every((e) => e.account.startsWith(`owner:${ownerA}:`))).toBe(true);
    const walked: Entry[] = [];
    let cursor: string | null = null;
    do {
      const page: Record<string, unknown> = await json(`/journal?ownerId=${ownerA}&limit=1${cursor ? `&cursor=${cursor}` : ''}`, tokens.all);
      walked.push(...(page['entries'] as Entry[]));
      cursor = page['nextCursor'] as string | null;
    } while (cursor);
    expect(walked).toEqual(all);
    const call = (await json(`/journal?intentId=${intentId}`, tokens.all))['entries'] as Entry[];
    expect(call.some((e) => e.account === 'platform:revenue')).toBe(true);
    expect(call.reduce((s, e) => s + BigInt(e.amountMinor), 0n)).toBe(0n); // every posting of the call balances
  });

  it('exports the journal as CSV whose rows add up to the balances', async () => {
    const res = await get(`/journal.csv?ownerId=${ownerA}`, tokens.all);
    expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
    const [header, ...rows] = (await res.text()).trim().split('\r\n');
    expect(header).toBe('occurred_at,recorded_at,posting_id,seq,kind,intent_id,account,asset,amount_minor,amount,rail,charge_minor,unit,units,unit_price_minor');
    const sums = new Map<string, bigint>();
    for (const r of rows) {
      const f = r.split(',');
      sums.set(f[6]!, (sums.get(f[6]!) ?? 0n) + BigInt(f[8]!));
    }
    const balances = (await json(`/balances/owners/${ownerA}`, tokens.all))['accounts'] as { account: string; balance: string }[];
    expect(Object.fromEntries([...sums].map(([k, v]) => [k, v.toString()]).filter(([, v]) => v !== '0'))).toEqual(Object.fromEntries(balances.filter((b) => b.balance !== '0').map((b) => [b.account, b.balance])));
  });

  it('states an owner\'s period: opening, lines, closing — as JSON and as CSV', async () => {
    const to = new Date(Date.now() + 60_000).toISOString();
    const s = await json(`/statements/owners/${ownerA}?from=${startedAt}&to=${to}`, tokens.a);
    const accounts = s['accounts'] as { account: string; opening: string; movements: string; closing: string }[];
    const available = accounts.find((a) => a.account === `owner:${ownerA}:available`)!;
    expect(available).toMatchObject({ opening: '0', closing: '900' });
    const csv = await (await get(`/statements/owners/${ownerA}?from=${startedAt}&to=${to}&format=csv`, tokens.a)).text();
    expect(csv.split('\r\n').filter((l) => l.startsWith(`closing,${to},,,,,,owner:${ownerA}:available,USDC,900`))).toHaveLength(1);
    const provider = await json(`/statements/providers/text-tools?from=${startedAt}&to=${to}`, tokens.all);
    expect((provider['accounts'] as { account: string; closing: string }[]).find((a) => a.account === 'provider:text-tools:payable')?.closing).toBe('90');
  });

  it('keeps owner-limited tokens in their owner, and refuses bad cursors and periods clearly', async () => {
    expect((await get(`/journal?ownerId=${ownerA}`, tokens.b)).status).toBe(403);
    expect((await get('/journal?providerId=text-tools', tokens.a)).status).toBe(403);
    expect((await get(`/statements/owners/${ownerA}?from=${startedAt}&to=${new Date().toISOString()}`, tokens.b)).status).toBe(403);
    expect((await get('/journal.csv', tokens.b)).status).toBe(200);
    const own = (await json('/journal', tokens.a))['entries'] as Entry[];
    expect(own.length).toBeGreaterThan(0);
    expect(own.every((e) => e.account.startsWith(`owner:${ownerA}:`))).toBe(true);
    expect((await json('/journal', tokens.b))['entries']).toEqual([]);
    expect(await json('/journal?cursor=bm90LWEtY3Vyc29y', tokens.all)).toMatchObject({ code: 'INVALID_CURSOR' });
    expect(await json(`/statements/owners/${ownerA}?from=${new Date().toISOString()}&to=${startedAt}`, tokens.all)).toMatchObject({ code: 'PERIOD_INVALID' });
    expect((await get('/journal?limit=100000', tokens.all)).status).toBe(400);
    expect((await get('/journal', 'not-a-token')).status).toBe(401);
  });
});
