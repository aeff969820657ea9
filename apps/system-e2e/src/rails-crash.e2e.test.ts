/**
 * G5.3, B3 — distributed mode, each service its own process on the real broker: metered calls paid from outside —
 * by x402 `upto` (a stand-in facilitator and its chain) and by MPP `authorize` (the sandbox method's backend, paid by
 * mppx's own MCP client) — are answered with their maximum held, then payment and settlement are killed -9 before the
 * verification window closes. After the restart every call settles once, charged by its usage, and exactly its
 * charge is collected from outside, once: one transfer per upto call on the chain, one capture per MPP call; the rest
 * of each maximum is never taken.
 */
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type DistributedSystem, startDistributedSystem, startTestFacilitator, startTestMppSandbox, startTsProcess, type TestFacilitator, type TestMppSandbox, testPayer, waitFor } from '@tollgate/testing';
import { callThrough, connectAgent, errorOf, postJson, receiptOf } from './agent-client';

jest.setTimeout(420_000);

const PAY_TO = '0x5a0b54d5dc17e0aadc383d2db43b0a0d3e029c4c';
const SECRET = 'rails-crash-secret-key-0123456789abcdef';
const UNITS = [3, 13, 42];
const CHARGES = UNITS.map((u) => Math.max(u * 1000, 5000));

describe('metered calls paid by x402 upto and by MPP, payment and settlement killed -9 mid-way (distributed)', () => {
  let dir: string;
  let system: DistributedSystem;
  let facilitator: TestFacilitator;
  let sandbox: TestMppSandbox;
  let gw: string;
  let credential: string;

  /** mppx's MCP client in its own process (see mpp-agent.ts): the results of its steps. */
  const mppAgent = async (token: string, steps: Record<string, unknown>[]) => {
    const p = startTsProcess('mpp-agent', 'apps/system-e2e/src/mpp-agent.ts', [JSON.stringify({ url: `${gw}/mcp/rails`, bearer: credential, era: 'classic', token, steps })]);
    const code = await new Promise<number | null>((resolve) => p.child.once('exit', resolve));
    const line = p.output().split('\n').find((l) => l.includes('{"results"'));
    if (code !== 0 || !line) throw new Error(`mpp agent failed (${code}): ${p.output().slice(-2000)}`);
    return (JSON.parse(line.slice(line.indexOf('{"results"'))) as { results: CallToolResult[] }).results;
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-rails-crash-'));
    facilitator = await startTestFacilitator({ stateFile: path.join(dir, 'facilitator.json') });
    sandbox = await startTestMppSandbox({ stateFile: path.join(dir, 'mpp.json') });
    system = await startDistributedSystem(['gateway', 'discovery', 'execution', 'payment', 'settlement', 'ledger', 'sample-providers'], {
      SETTLEMENT_VERIFICATION_WINDOW_MS: '4000', PAYMENT_X402_FACILITATOR: facilitator.url, PAYMENT_X402_NETWORK: 'eip155:84532', PAYMENT_X402_PAY_TO: PAY_TO,
      PAYMENT_X402_CHAIN_RPC: facilitator.rpcUrl, PAYMENT_X402_FACILITATOR_TIMEOUT_MS: '3000', PAYMENT_MPP_SANDBOX: sandbox.url, PAYMENT_MPP_SECRET_KEY: SECRET,
    });
    const token = system.adminToken;
    gw = system.url('gateway');
    expect((await postJson(`${system.url('discovery')}/admin/providers`, { providerId: 'metered-fixtures', endpoint: `${system.url('sample-providers')}/providers/metered-fixtures/mcp` }, token)).status).toBe(201);
    const ownerId = (await postJson(`${gw}/admin/owners`, { name: 'Rails crash' }, token)).json['ownerId'] as string;
    const agentId = (await postJson(`${gw}/admin/owners/${ownerId}/agents`, { name: 'a' }, token)).json['agentId'] as string;
    credential = (await postJson(`${gw}/admin/agents/${agentId}/credentials`, {}, token)).json['credential'] as string;
    expect((await postJson(`${gw}/admin/mcp-urls`, { slug: 'rails', discoveryMode: 'search' }, token)).status).toBe(201);
    const probe = await connectAgent(`${gw}/mcp/rails`, credential);
    await waitFor('report_usage metered in the catalog', async () => {
      const r = (await probe.callTool({ name: 'get_tool', arguments: { name: 'report_usage' } })) as CallToolResult;
      return !errorOf(r) && (r.structuredContent as { price?: { metered?: unknown } }).price?.metered !== undefined;
    }, 90_000, 300);
    await probe.close();
  });

  afterAll(async () => {
    await system?.stop();
    await facilitator?.stop().catch(() => undefined);
    await sandbox?.stop().catch(() => undefined);
    rmSync(dir, { recursive: true, force: true });
  });

  it('collects each charge exactly once after the restart, by both rails', async () => {
    const agent = await connectAgent(`${gw}/mcp/rails`, credential);
    const payer = testPayer();
    await facilitator.fund(payer.address, 10_000_000n);
    const upto: { key: string; payment: unknown }[] = [];
    for (const [i, units] of UNITS.entries()) {
      const asked = await callThrough(agent, 'report_usage', { text: 'r', usage: { units } }, `upto-ask-${i}`);
      const req = (asked._meta?.['x402/paymentRequired'] as { accepts: Parameters<typeof payer.signUpto>[0][] }).accepts[0]!;
      const payment = await payer.signUpto(req);
      const paid = await callThrough(agent, 'report_usage', { text: 'r', usage: { units } }, `upto-${i}`, { 'x402/payment': payment });
      expect(receiptOf(paid)).toMatchObject({ status: 'VERIFYING', held: { amountMinor: '100000' } });
      upto.push({ key: `upto-${i}`, payment });
    }
    const token = await sandbox.wallet(10_000_000n);
    const mppCalls = UNITS.map((units, i) => ({ kind: 'pay', tool: 'report_usage', args: { text: 'm', usage: { units } }, key: `mpp-${i}` }));
    for (const r of await mppAgent(token, mppCalls)) expect(receiptOf(r)).toMatchObject({ status: 'VERIFYING', held: { amountMinor: '100000' } });

    for (const name of ['settlement', 'payment']) await system.processes.filter((p) => p.name === name).at(-1)!.stop('SIGKILL');
    for (const name of ['settlement', 'payment']) system.start(name);
    for (const name of ['settlement', 'payment']) {
      await waitFor(`${name} ready`, async () => (await fetch(`${system.url(name)}/health/ready`).catch(() => undefined))?.status === 200 || undefined, 120_000, 250);
    }

    for (const [i, units] of UNITS.entries()) {
      const done = await waitFor(`upto-${i} settled`, async () => {
        const r = await callThrough(agent, 'report_usage', { text: 'r', usage: { units } }, upto[i]!.key, { 'x402/payment': upto[i]!.payment });
        return receiptOf(r)?.status === 'SETTLED' ? r : undefined;
      }, 90_000, 500);
      expect(receiptOf(done)).toMatchObject({ charged: { amountMinor: String(CHARGES[i]) } });
    }
    const settledMpp = await waitFor('the MPP calls settled', async () => {
      const rs = await mppAgent(token, mppCalls);
      return rs.every((r) => receiptOf(r)?.status === 'SETTLED') ? rs : undefined;
    }, 90_000, 1_000);
    expect(settledMpp.map((r) => receiptOf(r)!.charged.amountMinor)).toEqual(CHARGES.map(String));

    const transfers = await waitFor('each upto charge on the chain', async () => {
      const t = await facilitator.transfersFrom(payer.address);
      return t.length >= UNITS.length ? t : undefined;
    }, 60_000, 500);
    expect(transfers.map((t) => Number(t.value)).sort((a, b) => a - b)).toEqual([...CHARGES].sort((a, b) => a - b));
    const captures = await waitFor('each MPP charge captured', async () => {
      const ps = Object.values((await sandbox.state()).payments).filter((p) => p.token === token);
      return ps.length === UNITS.length && ps.every((p) => p.captured !== undefined) ? ps : undefined;
    }, 60_000, 500);
    expect(captures.map((p) => Number(p.captured)).sort((a, b) => a - b)).toEqual([...CHARGES].sort((a, b) => a - b));
    expect(BigInt((await sandbox.state()).balances[token]!)).toBe(10_000_000n - BigInt(CHARGES.reduce((a, b) => a + b, 0)));
    await agent.close();
  });
});
