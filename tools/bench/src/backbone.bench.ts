/**
 * Backbone benchmark: paid call_tool calls through the gateway beside direct calls to the same
 * upstream (text-tools word_count, served by the sample providers in their own process), sequentially (1 agent) and
 * with 16 separate agents, a round with a slow upstream (200 ms, 16 agents: `slow-upstream.ts`), plus PostgreSQL statements, commits and CPU per call (pg_stat_statements, pg_stat_database,
 * /proc) once the background work of those calls (settlement, ledger) is done, net of the idle rate. For the sequential
 * round it also prints each stage's mean wait and handler time (the services' own event-age and handle histograms,
 * scraped from /metrics) and each process's CPU per call (the broker's too, when infra/kafka runs here).
 *
 *   npm run bench:backbone                    embedded, then distributed (needs the local Kafka: npm run kafka:start)
 *   BENCH_MODES=embedded npm run bench:backbone
 *   BENCH_SOAK_S=600 npm run bench:backbone   adds a steady-load soak: memory, open holds and p99 per 30 s window
 *   BENCH_CPU_PROFILE=/tmp/prof npm run bench:backbone   V8 CPU profiles of the embedded host or of every service
 *                                                 (summarise one with tools/bench/src/cpu-profile-summary.ts)
 *   BENCH_ERA=2026-07-28 npm run bench:backbone   agents (and the direct clients) speak MCP 2026-07-28 (SDK v2 client,
 *                                                 pinned) instead of the 2025 era; results in backbone-2026-07-28.json
 *
 * Writes tools/bench/results/backbone.json.
 */
import { type Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Topics } from '@tollgate/contracts';
import { waitFor } from '@tollgate/testing';
import { measure, modeResults, type Stats } from './bench-stats';
import {
  AGENTS, booksAfter, callDirect, callGateway, callGatewayFree, counters, FREE_CALLS, idleRate, MODERN_ERA, mcp, onEmbedded, perCall, prepareAgents,
  stageCounters, stageMeans, type Target,
} from './bench-system';
import { onDistributed } from './distributed-target';
import { meteredRound } from './metered-round';
import { slowUpstreamRound } from './slow-upstream';

const SEQUENTIAL = 300;
const CONCURRENT_CALLS = 960;
/** The sequential rounds after a burst, right away and once caught up (growth or catch-up). */
const AFTER_BURST_CALLS = 100;

async function soak(agents: Client[], t: Target, seconds: number) {
  const windows: Record<string, unknown>[] = [];
  const end = Date.now() + seconds * 1000;
  let i = 0;
  while (Date.now() < end) {
    const before = await counters(t);
    const s = await measure(8 * 30, 8, async (n) => {
      await callGateway(agents[n % agents.length]!, i++);
      await new Promise((r) => setTimeout(r, 100));
    });
    // Calls whose life is not finished (no settlement or refund yet): the event lag as a user sees it.
    const [open] = (await t.pg.query<{ n: string }>("SELECT count(*)::text AS n FROM payment.hold WHERE open")).rows;
    windows.push({ atS: Math.round((Date.now() - (end - seconds * 1000)) / 1000), p50Ms: s.p50Ms, p99Ms: s.p99Ms, throughputPerS: s.throughputPerS, rssMb: t.rssMb(), openHolds: Number(open!.n), cpuMsPerCall: perCall(before, await counters(t), { statementsPerS: 0, commitsPerS: 0, cpuPerS: 0 }, s.n).cpuMs });
    process.stdout.write(`soak ${JSON.stringify(windows.at(-1))}\n`);
  }
  return windows;
}

/** The backbone's measurements against one running system. */
async function measureTarget(t: Target): Promise<Record<string, unknown>> {
  const { agents } = await prepareAgents(t);
  const directs = await Promise.all(Array.from({ length: AGENTS }, () => mcp(t.upstream, t.upstreamToken)));
  // The new price reaches every service's catalog copy: wait for paid calls from every agent.
  await waitFor('paid word_count callable', async () => Promise.all(agents.map((a, i) => callGateway(a, i))).then(() => true, () => false), 90_000, 1000);
  for (let i = 0; i < 50; i++) await callGateway(agents[i % AGENTS]!, i); // warm-up
  for (let i = 0; i < 50; i++) await callDirect(directs[0]!, i);
  await new Promise((r) => setTimeout(r, 2000));
  const idle = await idleRate(t);

  const direct = { sequential: await measure(SEQUENTIAL, 1, (i) => callDirect(directs[0]!, i)), agents16: await measure(CONCURRENT_CALLS, AGENTS, (i) => callDirect(directs[i % AGENTS]!, i)) };
  let before = await counters(t);
  const stagesBefore = await stageCounters(t);
  const cpuBefore = t.cpuByService();
  const sequentialFrom = new Date();
  const sequential = await measure(SEQUENTIAL, 1, (i) => callGateway(agents[0]!, i));
  const sequentialTo = new Date();
  await new Promise((r) => setTimeout(r, 3000)); // the verification window closes; settlement and ledger finish
  const sequentialCost = perCall(before, await counters(t), idle, SEQUENTIAL);
  const stages = stageMeans(stagesBefore, await stageCounters(t));
  // Each process's CPU per sequential paid call (gross: its idle work included), to see which service the time goes to.
  const cpuAfter = t.cpuByService();
  const cpuMsPerCallByService = Object.fromEntries(Object.entries(cpuAfter).map(([name, s]) => [name, +(((s - (cpuBefore[name] ?? 0)) * 1000) / SEQUENTIAL).toFixed(2)]));
  // Free calls (reverse_text is never priced), as warm as the paid round: the same life without money moving.
  const free = await measure(FREE_CALLS, 1, (i) => callGatewayFree(agents[1]!, i, 'reverse_text'));
  if (t.statements) await t.pg.query('SELECT pg_stat_statements_reset()');
  before = await counters(t);
  const agents16 = await measure(CONCURRENT_CALLS, AGENTS, (i) => callGateway(agents[i % AGENTS]!, i));
  await new Promise((r) => setTimeout(r, 3000));
  const concurrentCost = perCall(before, await counters(t), idle, CONCURRENT_CALLS);
  // Where the statements of the 16-agent run went: the most frequent ones, per paid call.
  const topStatements = t.statements ? (await t.pg.query<{ calls: string; query: string }>(
    'SELECT calls::text, left(regexp_replace(query, \'\\s+\', \' \', \'g\'), 140) AS query FROM pg_stat_statements ORDER BY calls DESC LIMIT 120',
  )).rows.map((r) => ({ perCall: +(Number(r.calls) / CONCURRENT_CALLS).toFixed(2), query: r.query })) : [];
  const books = await booksAfter(t.pg);
  const afterBurst = await growthOrCatchUp(agents, t);
  // Where a sequential call's time goes: the median gap before each fact, from the previous fact of the same call.
  const hops = (await t.pg.query<{ type: string; p50: number }>(
    `SELECT type, round(percentile_cont(0.5) WITHIN GROUP (ORDER BY gap_ms)::numeric, 2)::float AS p50 FROM (
       SELECT type, occurred_at, extract(epoch FROM occurred_at - lag(occurred_at) OVER (PARTITION BY intent_id ORDER BY occurred_at)) * 1000 AS gap_ms
         FROM ledger.timeline_entry WHERE intent_id IN (SELECT intent_id FROM ledger.timeline_entry WHERE type = 'CallRequested' AND occurred_at BETWEEN $1 AND $2)) t
      WHERE gap_ms IS NOT NULL GROUP BY type ORDER BY min(occurred_at)`, [sequentialFrom, sequentialTo],
  )).rows.map((r) => ({ fact: r.type, medianGapMs: r.p50 }));
  const criticalPathCommits = await commitsBeforeAnswer(t, sequentialFrom, sequentialTo);
  const slowUpstream = await slowUpstreamRound(t, agents);
  const meteredVsFixed = await meteredRound(t, [agents[4]!, agents[5]!], idle);
  const soakSeconds = Number(process.env['BENCH_SOAK_S'] ?? 0);
  const soakWindows = soakSeconds > 0 ? await soak(agents, t, soakSeconds) : undefined;
  await Promise.all([...agents, ...directs].map((c) => c.close()));
  return {
    direct, gateway: { sequential, agents16 }, freeCalls: { sequential: free }, idle,
    overheadP50Ms: +(sequential.p50Ms - direct.sequential.p50Ms).toFixed(2),
    costPerPaidCall: { sequential: sequentialCost, agents16: concurrentCost }, topStatements,
    books, hops, criticalPathCommits, stages, cpuMsPerCallByService, afterBurst, slowUpstream, meteredVsFixed, ...(soakWindows ? { soak: soakWindows } : {}),
  };
}

/** The facts a paid call's answer waits for, in order (its effect confirmed is the answer's last). */
const CRITICAL_TOPICS = [Topics.callRequested, Topics.paymentHeld, Topics.callDispatched, Topics.resultReceived, Topics.effectConfirmed];

/**
 * Commits on a sequential paid call's critical path (median): the distinct transactions that wrote its facts up to the
 * confirmed effect. In embedded mode the gateway folds the answer inside the last of them (its consumer is applied in
 * the producer's transaction: see `gateway.outcomes ← EffectConfirmed` waiting well under a millisecond in the stage
 * table), so this is every commit before the agent can have its answer. Read from the embedded log, where each event
 * keeps its transaction id; undefined in distributed mode (outbox rows are rewritten when published, losing it).
 */
async function commitsBeforeAnswer(t: Target, from: Date, to: Date): Promise<number | undefined> {
  const [log] = (await t.pg.query<{ present: boolean }>(`SELECT to_regclass('eventlog.event') IS NOT NULL AS present`)).rows;
  if (!log?.present) return undefined;
  const [row] = (await t.pg.query<{ p50: number | null }>(
    `SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY n)::float AS p50 FROM (
       SELECT key, count(DISTINCT txid) AS n FROM eventlog.event
        WHERE topic = ANY($3::text[]) AND key IN (SELECT intent_id::text FROM ledger.timeline_entry WHERE type = 'CallRequested' AND occurred_at BETWEEN $1 AND $2)
        GROUP BY key) c`, [from, to, CRITICAL_TOPICS])).rows;
  return row?.p50 ?? undefined;
}

/**
 * The sequential p50 right after a 16-agent burst was ~2x the first round's — background catch-up
 * (settlement, ledger and the relay still working through the burst) or growth of the tables? A second burst, then a
 * sequential round at once, then another once every hold of the burst is resolved (the system caught up): if the
 * third matches the first round, the slowdown was catch-up; if it stays high, it is growth.
 */
async function growthOrCatchUp(agents: Client[], t: Target): Promise<Record<string, Stats>> {
  // Each round on an agent of its own: the per-agent call rate (G9) would refuse one agent's 500+ calls in a minute.
  const round = (from: number) => measure(AFTER_BURST_CALLS, 1, (i) => callGateway(agents[(from / 1_000_000) % agents.length]!, from + i));
  await measure(CONCURRENT_CALLS / 2, AGENTS, (i) => callGateway(agents[i % AGENTS]!, 1_000_000 + i));
  const rightAfter = await round(2_000_000);
  await booksAfter(t.pg);
  const caughtUp = await round(3_000_000);
  return { rightAfter, caughtUp };
}

function embedded(): Promise<Record<string, unknown>> {
  return onEmbedded('backbone', measureTarget);
}

function distributed(): Promise<Record<string, unknown>> {
  return onDistributed(measureTarget);
}

function report(mode: string, r: Record<string, unknown>): string {
  const f = (s: Stats) => `p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms, ${s.throughputPerS} calls/s`;
  const d = r['direct'] as Record<string, Stats>;
  const g = r['gateway'] as Record<string, Stats>;
  const c = r['costPerPaidCall'] as Record<string, Record<string, number>>;
  return [
    `${mode} direct   sequential: ${f(d['sequential']!)} | 16 agents: ${f(d['agents16']!)}`,
    `${mode} gateway  sequential: ${f(g['sequential']!)} | 16 agents: ${f(g['agents16']!)}  (paid calls)`,
    `${mode} overhead p50 ${String(r['overheadP50Ms'])} ms; throughput gateway/direct (16 agents) ${(g['agents16']!.throughputPerS / d['agents16']!.throughputPerS).toFixed(3)}`,
    `${mode} per paid call (sequential): ${c['sequential']!['statements']} statements, ${c['sequential']!['commits']} commits, ${c['sequential']!['cpuMs']} ms CPU (node ${c['sequential']!['nodeCpuMs']}, postgres ${c['sequential']!['postgresCpuMs']})`,
    `${mode} per paid call (16 agents):  ${c['agents16']!['statements']} statements, ${c['agents16']!['commits']} commits, ${c['agents16']!['cpuMs']} ms CPU (node ${c['agents16']!['nodeCpuMs']}, postgres ${c['agents16']!['postgresCpuMs']})`,
    `${mode} slow upstream (${(r['slowUpstream'] as { upstreamMs: number }).upstreamMs} ms), 16 agents: direct ${f((r['slowUpstream'] as Record<string, Stats>)['direct']!)} | gateway ${f((r['slowUpstream'] as Record<string, Stats>)['gateway']!)}  (paid calls; budget >= 60/s)`,
    ...(['fixed', 'metered'] as const).map((k) => {
      const m = (r['meteredVsFixed'] as Record<string, { p50Ms: number; statements: number; commits: number; cpuMs: number }>)[k]!;
      return `${mode} ${k.padEnd(7)} price, sequential: p50 ${m.p50Ms} ms, ${m.statements} statements, ${m.commits} commits, ${m.cpuMs} ms CPU per paid call`;
    }),
    `${mode} books after the run: ${JSON.stringify(r['books'])}`,
    `${mode} free calls (sequential, through the gateway): p50 ${(r['freeCalls'] as { sequential: Stats }).sequential.p50Ms} ms, p99 ${(r['freeCalls'] as { sequential: Stats }).sequential.p99Ms} ms`,
    `${mode} sequential p50 first ${g['sequential']!.p50Ms} ms; right after a burst ${(r['afterBurst'] as Record<string, Stats>)['rightAfter']!.p50Ms} ms; once caught up ${(r['afterBurst'] as Record<string, Stats>)['caughtUp']!.p50Ms} ms`,
    `${mode} commits before a sequential paid call's answer (median; the answering fold inside the last): ${r['criticalPathCommits'] ?? 'n/a (distributed)'}`,
    `${mode} median gap before each fact (sequential): ${(r['hops'] as { fact: string; medianGapMs: number }[]).map((h) => `${h.fact} ${h.medianGapMs} ms`).join(', ')}`,
    `${mode} CPU per sequential paid call by process (gross): ${Object.entries(r['cpuMsPerCallByService'] as Record<string, number>).map(([n, ms]) => `${n} ${ms} ms`).join(', ')}`,
    `${mode} each stage (sequential, mean): consumer ← event: wait from production to handling + handler`,
    ...(r['stages'] as ReturnType<typeof stageMeans>).map((s) => `  ${s.stage.padEnd(36)} ${String(s.waitMs).padStart(7)} ms + ${String(s.handleMs).padStart(6)} ms  (${s.events} events)`),
    `${mode} most frequent statements per paid call (16 agents):`,
    ...(r['topStatements'] as { perCall: number; query: string }[]).map((t) => `  ${t.perCall.toFixed(2).padStart(6)}  ${t.query}`),
  ].join('\n');
}

async function main(): Promise<void> {
  // BENCH_MODES=embedded (or distributed) runs one mode; the results file keeps the other mode's last figures.
  const results = modeResults(MODERN_ERA ? 'backbone-2026-07-28' : 'backbone', ['embedded', 'distributed']);
  for (const [mode, run] of [['embedded', embedded], ['distributed', distributed]] as const) {
    if (!results.wants(mode)) continue;
    const r = await run();
    process.stdout.write(`${report(mode, r)}\n`);
    results.record(mode, r);
  }
  process.stdout.write(`written to ${results.file}\n`);
}

main().then(() => process.exit(0), (e) => {
  process.stderr.write(`${String(e?.stack ?? e)}\n`);
  process.exit(1);
});
