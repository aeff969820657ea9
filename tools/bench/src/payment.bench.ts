/**
 * Payment benchmark.
 *
 * 1. Holds and settlements per second on one PostgreSQL: the double-entry store
 *    the payment and settlement services use (`applyPosting` with the movements
 *    of libs/accounting), each operation its own transaction — a hold is the
 *    guarded debit available → held; a settlement is payment's capture
 *    (held → clearing) plus settlement's split (clearing → payable + revenue).
 *    Anchor: a plain PostgreSQL ledger reaches ~10,000 transfers/s on a laptop.
 * 2. The p99 of a paid call against a free one through the whole distributed
 *    pipeline (same upstream, text-tools: reverse_text priced at 500 minor
 *    units by the admin, word_count free).
 *
 * For scale, the same PostgreSQL's own pgbench (TPC-B-like, 16 clients) is run
 * beside it when pgbench is on the PATH.
 *
 * Needs the local Kafka for part 2. Writes tools/bench/results/payment.json.
 * Run: `npm run bench:payment`.
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { DataSource, type QueryRunner } from 'typeorm';
import { Movements, splitFee } from '@tollgate/accounting';
import { applyPosting, createDoubleEntryTables } from '@tollgate/persistence';
import { createTestDatabase, startDistributedSystem, waitFor } from '@tollgate/testing';
import { measure, stats, type Stats } from './bench-stats';

const WALLETS = 64;
const OPERATIONS = 4000;
const CONCURRENCY = 16;
const PRICE = 500n;
const CALLS = 200;

async function storeThroughput(): Promise<{ holds: Stats; settlements: Stats; concurrency: number; wallets: number }> {
  const db = await createTestDatabase('tollgate_bench');
  const ds = new DataSource({ type: 'postgres', url: db.url, poolSize: CONCURRENCY + 2 });
  await ds.initialize();
  try {
    const q: QueryRunner = ds.createQueryRunner();
    for (const schema of ['payment', 'settlement']) {
      await q.query(`CREATE SCHEMA ${schema}`);
      await createDoubleEntryTables(q, schema, ['deposit', 'hold', 'capture', 'void', 'settle', 'payout']);
    }
    await q.release();
    const owners = Array.from({ length: WALLETS }, (_, i) => `bench-owner-${i}`);
    for (const o of owners) {
      await ds.transaction((m) => applyPosting(m, 'payment', `deposit:${o}`, 'deposit', Movements.deposit(o, { minor: PRICE * BigInt(OPERATIONS), asset: 'USDC' })));
    }
    const holdIds = Array.from({ length: OPERATIONS }, () => randomUUID());
    const holds = await measure(OPERATIONS, CONCURRENCY, async (i) => {
      await ds.transaction((m) => applyPosting(m, 'payment', `hold:${holdIds[i]}`, 'hold', Movements.hold(owners[i % WALLETS]!, { minor: PRICE, asset: 'USDC' })));
    });
    const settlements = await measure(OPERATIONS, CONCURRENCY, async (i) => {
      const owner = owners[i % WALLETS]!;
      const amount = { minor: PRICE, asset: 'USDC' };
      await ds.transaction((m) => applyPosting(m, 'payment', `capture:${holdIds[i]}`, 'capture', Movements.capture(owner, amount, PRICE)));
      await ds.transaction((m) => applyPosting(m, 'settlement', `settle:${holdIds[i]}`, 'settle', Movements.settle('bench-provider', amount, splitFee(PRICE, 1000).fee)));
    });
    const [sum] = await ds.query(`SELECT (SELECT sum(amount) FROM payment.entry) + (SELECT sum(amount) FROM settlement.entry) AS s`);
    if (String(sum.s) !== '0') throw new Error(`the books do not balance after the run: ${sum.s}`);
    return { holds, settlements, concurrency: CONCURRENCY, wallets: WALLETS };
  } finally {
    await ds.destroy();
    await db.drop();
  }
}

async function client(url: string, credential: string): Promise<Client> {
  const c = new Client({ name: 'bench', version: '1' });
  await c.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${credential}` } } }));
  return c;
}

async function post(url: string, body: unknown, token: string): Promise<Record<string, string>> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify(body) });
  return (await res.json()) as Record<string, string>;
}

async function paidAgainstFree(): Promise<{ paid: Stats; free: Stats }> {
  const system = await startDistributedSystem(['gateway', 'discovery', 'execution', 'payment', 'settlement', 'ledger', 'sample-providers'], {
    LOG_LEVEL: 'warn', SETTLEMENT_VERIFICATION_WINDOW_MS: '1000', PAYMENT_VELOCITY_CALLS_PER_MINUTE: '100000',
  });
  try {
    const gw = system.url('gateway');
    const token = system.adminToken;
    await post(`${gw}/admin/mcp-urls`, { slug: 'bench', discoveryMode: 'search' }, token);
    await post(`${system.url('discovery')}/admin/providers`, { providerId: 'text-tools', endpoint: `${system.url('sample-providers')}/providers/text-tools/mcp` }, token);
    await fetch(`${system.url('discovery')}/admin/tools/reverse_text`, {
      method: 'PATCH', headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body: JSON.stringify({ priceMinor: PRICE.toString(), asset: 'USDC' }),
    });
    const { ownerId } = await post(`${gw}/admin/owners`, { name: 'bench' }, token);
    const { agentId } = await post(`${gw}/admin/owners/${ownerId}/agents`, { name: 'bench' }, token);
    const { credential } = await post(`${gw}/admin/agents/${agentId}/credentials`, {}, token);
    await post(`${system.url('payment')}/admin/owners/${ownerId}/deposits`, { reference: 'bench-1', amount: { amountMinor: (PRICE * 10_000n).toString(), asset: 'USDC' } }, token);
    const c = await client(`${gw}/mcp/bench`, credential!);
    const call = async (name: string, args: Record<string, unknown>) => {
      const r = (await c.callTool({ name: 'call_tool', arguments: { name, arguments: args } })) as CallToolResult;
      if (r.isError) throw new Error(JSON.stringify(r._meta));
    };
    const paid = (i: number) => call('reverse_text', { text: `paid ${i}` });
    const free = (i: number) => call('word_count', { text: `free ${i}` });
    await waitFor('both tools callable', async () => paid(-1).then(() => free(-1)).then(() => true, () => false), 90_000, 500);
    for (let i = 0; i < 20; i++) await paid(-2 - i).then(() => free(-2 - i)); // warm-up
    // Interleaved, so load and machine noise fall on both alike.
    const paidSamples: number[] = [];
    const freeSamples: number[] = [];
    const wall = { paid: 0, free: 0 };
    for (let i = 0; i < CALLS; i++) {
      for (const [kind, fn, samples] of [['paid', paid, paidSamples], ['free', free, freeSamples]] as const) {
        const t = performance.now();
        await fn(i);
        const d = performance.now() - t;
        samples.push(d);
        wall[kind] += d;
      }
    }
    await c.close();
    return { paid: stats(paidSamples, wall.paid), free: stats(freeSamples, wall.free) };
  } finally {
    await system.stop();
  }
}

/** pgbench's TPC-B-like run on the same server, for scale (null when pgbench is not installed). */
async function pgbenchBaseline(): Promise<{ tps: number; latencyMs: number } | null> {
  const db = await createTestDatabase('tollgate_pgbench');
  try {
    const url = new URL(db.url);
    const args = ['-h', url.hostname, '-p', url.port || '5432', '-U', url.username || 'postgres'];
    const init = spawnSync('pgbench', [...args, '-i', '-s', '4', '-q', url.pathname.slice(1)], { encoding: 'utf8' });
    if (init.error || init.status !== 0) return null;
    const run = spawnSync('pgbench', [...args, '-c', String(CONCURRENCY), '-j', '2', '-T', '15', url.pathname.slice(1)], { encoding: 'utf8' });
    const tps = /tps = ([0-9.]+)/.exec(run.stdout)?.[1];
    const latency = /latency average = ([0-9.]+) ms/.exec(run.stdout)?.[1];
    return tps && latency ? { tps: Number(tps), latencyMs: Number(latency) } : null;
  } finally {
    await db.drop();
  }
}

async function main(): Promise<void> {
  const baseline = await pgbenchBaseline();
  if (baseline) process.stdout.write(`pgbench (TPC-B-like, ${CONCURRENCY} clients) on the same server: ${baseline.tps} tps, ${baseline.latencyMs} ms average\n`);
  const store = await storeThroughput();
  const f = (s: Stats) => `${s.throughputPerS}/s (p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms)`;
  process.stdout.write(`store, ${CONCURRENCY} connections, ${WALLETS} wallets: holds ${f(store.holds)}; settlements (capture + split) ${f(store.settlements)}\n`);
  const calls = await paidAgainstFree();
  process.stdout.write(`distributed call_tool, 1 agent: paid p50 ${calls.paid.p50Ms} ms p99 ${calls.paid.p99Ms} ms; free p50 ${calls.free.p50Ms} ms p99 ${calls.free.p99Ms} ms\n`);
  const out = path.resolve(__dirname, '../results');
  mkdirSync(out, { recursive: true });
  const file = path.join(out, 'payment.json');
  writeFileSync(file, JSON.stringify({ at: new Date().toISOString(), machine: { cpus: os.cpus().length, node: process.version }, pgbench: baseline, store, calls }, null, 2) + '\n');
  process.stdout.write(`written to ${file}\n`);
}

main().then(() => process.exit(0), (e) => {
  process.stderr.write(`${String(e?.stack ?? e)}\n`);
  process.exit(1);
});
