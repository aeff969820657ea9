/**
 * Growth benchmark: does the cost of a paid call grow with the work served? The embedded system (`npm start`, the
 * sample providers in their own process), then the distributed one (each service its own process, Kafka), serves
 * paid calls from 16 agents up to 100,000; at each
 * checkpoint (1k, 10k, 25k, 50k, 100k) it waits until the system has caught up (every hold resolved), then measures a
 * sequential round of paid calls — p50/p99, statements, commits and CPU per call — beside the rows the log, inboxes,
 * archive and call tables hold by then. Flat figures across checkpoints mean the cost does not grow with the tables.
 *
 *   npm run bench:growth                            up to 100,000 paid calls in each mode (~30 min each on 2 cores)
 *   BENCH_MODES=distributed npm run bench:growth    one mode (the distributed one needs npm run kafka:start)
 *   BENCH_GROWTH_CALLS=20000 npm run bench:growth   a shorter run (checkpoints scaled to it)
 *   BENCH_ERA=2026-07-28 npm run bench:growth       agents speak MCP 2026-07-28
 *
 * Writes tools/bench/results/growth.json.
 */
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SingleBar } from 'cli-progress';
import { waitFor } from '@tollgate/testing';
import { measure, modeResults, type Stats } from './bench-stats';
import { onDistributed } from './distributed-target';
import { AGENTS, booksAfter, callGateway, counters, idleRate, MODERN_ERA, onEmbedded, perCall, prepareAgents, type Target } from './bench-system';

const TOTAL = Number(process.env['BENCH_GROWTH_CALLS'] ?? 100_000);
/** Checkpoints as fractions of the total: 1k, 10k, 25k, 50k and 100k of the default run. */
const CHECKPOINTS = [0.01, 0.1, 0.25, 0.5, 1].map((f) => Math.round(TOTAL * f));
const PROBE_CALLS = 200;

/** Live rows of the tables that grow with every call (the statistics collector's counts: no scan of big tables). */
const GROWING_TABLES = [
  'eventlog.event', 'gateway.call', 'execution.pending_call', 'settlement.verification', 'payment.hold', 'payment.charge',
  'ledger.event_archive', 'ledger.timeline_entry', 'ledger.journal_entry',
];

async function tableRows(t: Target): Promise<Record<string, number>> {
  const { rows } = await t.pg.query<{ name: string; n: string }>(
    `SELECT schemaname || '.' || relname AS name, n_live_tup::text AS n FROM pg_stat_user_tables
      WHERE schemaname || '.' || relname = ANY($1::text[]) OR relname IN ('inbox_event', 'outbox_event')`, [GROWING_TABLES]);
  const out: Record<string, number> = {};
  for (const r of rows) {
    const name = r.name.endsWith('.inbox_event') ? 'inboxes' : r.name.endsWith('.outbox_event') ? 'outboxes' : r.name;
    out[name] = (out[name] ?? 0) + Number(r.n);
  }
  const [size] = (await t.pg.query<{ mb: string }>('SELECT (pg_database_size(current_database()) / 1048576)::text AS mb')).rows;
  return { ...out, databaseMb: Number(size!.mb) };
}

/**
 * Once caught up: a sequential round of paid calls and what it cost, beside the size of the growing tables. The idle
 * rate subtracted is measured right before, once the burst's work is done (a rate taken while the services still
 * consume a burst is not idle, and made the distributed CPU figures negative).
 */
async function probe(agents: Client[], t: Target, served: number, from: number) {
  await booksAfter(t.pg);
  await new Promise((r) => setTimeout(r, 3000)); // settlement's windows and the relays' last batches
  const idle = await idleRate(t);
  // The distributed test server may not load pg_stat_statements: then statements are not counted (NaN), as in backbone.
  if (t.statements) await t.pg.query('SELECT pg_stat_statements_reset()');
  const before = await counters(t);
  // One call at a time, from each agent in turn: an agent's velocity rule (600 calls a minute) is not the point here.
  const sequential = await measure(PROBE_CALLS, 1, (i) => callGateway(agents[i % AGENTS]!, from + i));
  await new Promise((r) => setTimeout(r, 3000)); // settlement and ledger finish the round's calls
  const cost = perCall(before, await counters(t), idle, PROBE_CALLS);
  // The statements that took the most time meanwhile (background sweeps included): one whose mean grows is the culprit.
  const slowest = !t.statements ? [] : (await t.pg.query<{ calls: string; mean: number; query: string }>(
    `SELECT calls::text, round(mean_exec_time::numeric, 3)::float AS mean, left(regexp_replace(query, '\\s+', ' ', 'g'), 120) AS query
       FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 5`)).rows.map((r) => ({ calls: Number(r.calls), meanMs: r.mean, query: r.query }));
  return { served, idle, sequential, cost, rows: await tableRows(t), slowest };
}

async function run(t: Target) {
  // Without autovacuum nothing analyzes the growing tables, so statements prepared while a table was small keep their
  // plans (production servers run it; this machine's does not): recorded beside the figures.
  const [server] = (await t.pg.query<{ autovacuum: string }>('SHOW autovacuum')).rows;
  const { agents } = await prepareAgents(t);
  await waitFor('paid word_count callable', async () => Promise.all(agents.map((a, i) => callGateway(a, i))).then(() => true, () => false), 90_000, 1000);
  const checkpoints: Awaited<ReturnType<typeof probe>>[] = [];
  const bursts: (Stats & { upTo: number })[] = [];
  const bar = new SingleBar({ format: 'paid calls {bar} {value}/{total} | {rate} calls/s', hideCursor: true });
  bar.start(TOTAL, 0, { rate: 0 });
  let served = 0;
  let probeCalls = 10_000_000;
  for (const upTo of CHECKPOINTS) {
    const n = Math.max(0, upTo - served);
    const burst = await measure(n, AGENTS, async (i) => {
      await callGateway(agents[i % AGENTS]!, served + i);
      bar.increment(1, { rate: 0 });
    });
    served = upTo;
    bar.update(served, { rate: burst.throughputPerS });
    bursts.push({ ...burst, upTo });
    checkpoints.push(await probe(agents, t, served, probeCalls));
    probeCalls += PROBE_CALLS;
    served += PROBE_CALLS; // the probe's calls are served work too
  }
  bar.stop();
  await Promise.all(agents.map((c) => c.close()));
  return { total: TOTAL, server: { autovacuum: server!.autovacuum }, checkpoints, bursts };
}

function report(r: Awaited<ReturnType<typeof run>>): string {
  const lines = r.checkpoints.map((c, i) => {
    const b = r.bursts[i]!;
    return `after ${String(c.served).padStart(7)} paid calls: sequential p50 ${c.sequential.p50Ms} ms, p99 ${c.sequential.p99Ms} ms; `
      + `${c.cost.statements} statements, ${c.cost.commits} commits, ${c.cost.cpuMs} ms CPU per call; 16-agent burst before it ${b.throughputPerS} calls/s (p50 ${b.p50Ms} ms); `
      + `rows: log ${c.rows['eventlog.event'] ?? 0}, outboxes ${c.rows['outboxes'] ?? 0}, inboxes ${c.rows['inboxes'] ?? 0}, archive ${c.rows['ledger.event_archive'] ?? 0}, calls ${c.rows['gateway.call'] ?? 0}; database ${c.rows['databaseMb']} MB`;
  });
  const slowest = r.checkpoints.map((c) => `after ${c.served}: ${c.slowest.map((q) => `${q.meanMs} ms x${q.calls} ${q.query.slice(0, 60)}`).join(' | ')}`);
  const server = r.server.autovacuum === 'on' ? [] : ['the server runs with autovacuum off: no table was analyzed during the run'];
  return [...server, ...lines, 'slowest statements during each probe (mean, calls):', ...slowest].join('\n');
}

async function main(): Promise<void> {
  // BENCH_MODES=embedded (or distributed) runs one mode; the results file keeps the other mode's last figures.
  const results = modeResults(MODERN_ERA ? 'growth-2026-07-28' : 'growth', ['embedded', 'distributed']);
  for (const [mode, on] of [['embedded', (m: typeof run) => onEmbedded('growth', m)], ['distributed', onDistributed]] as const) {
    if (!results.wants(mode)) continue;
    const r = await on(run);
    process.stdout.write(`${mode}:\n${report(r)}\n`);
    results.record(mode, r);
  }
  process.stdout.write(`written to ${results.file}\n`);
}

main().then(() => process.exit(0), (e) => {
  process.stderr.write(`${String(e?.stack ?? e)}\n`);
  process.exit(1);
});
