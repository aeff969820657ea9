/**
 * Ops replay benchmark (goal ≥ 20,000 events/s rebuilding journal + timelines on this machine):
 * BENCH_EVENTS (default 200,000) events of paid calls — CallRequested, PaymentHeld, HoldReleased, CallSettled, with
 * wallet deposits — are archived with their hash chain as the live ledger archives them, then `ReplayProjections`
 * rebuilds timelines, journal and daily balances from the archive into the shadow tables (reading and hash-checking
 * every event), then verifies them against a live projection built from the same events in bulk. Prints events/s,
 * SQL statements and transactions per 1,000 events, and Node CPU per event; writes tools/bench/results/replay.json.
 * Run: `npm run bench:replay`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { canonicalJson } from '@tollgate/contracts';
import { chainHash, GENESIS, ledgerDataSourceOptions, PROJECTIONS, ReplayProjections } from '@tollgate/ledger-service';
import { openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase, paidCallEvents } from '@tollgate/testing';

const EVENTS = Number(process.env['BENCH_EVENTS'] ?? 200_000);

async function main(): Promise<void> {
  const db = await createTestDatabase('tollgate_bench_replay');
  const ds = await openServiceDataSource(ledgerDataSourceOptions(db.url));
  try {
    // ~3.9 events per call; owners funded first.
    const events = paidCallEvents(Math.ceil(EVENTS / 3.86), { owners: 50 }).slice(0, EVENTS);
    const t0 = performance.now();
    let prev = GENESIS;
    for (let i = 0; i < events.length; i += 5000) {
      const page = events.slice(i, i + 5000).map((e, j) => {
        const text = canonicalJson(e.envelope);
        const position = i + j + 1;
        const hash = chainHash(prev, position, text);
        const row = { position, prev, hash, text, e };
        prev = hash;
        return row;
      });
      await ds.query(
        `INSERT INTO ledger.event_archive (position, event_id, topic, type, key, occurred_at, event_text, prev_hash, hash)
         SELECT * FROM unnest($1::bigint[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::timestamptz[], $7::text[], $8::text[], $9::text[])`,
        [page.map((r) => r.position), page.map((r) => r.e.envelope.eventId), page.map((r) => r.e.topic), page.map((r) => r.e.envelope.type), page.map((r) => r.e.envelope.key),
          page.map((r) => r.e.envelope.occurredAt), page.map((r) => r.text), page.map((r) => r.prev), page.map((r) => r.hash)]);
    }
    const loadS = (performance.now() - t0) / 1000;
    // The "live" projection: the same rebuild, swapped in (so verify has a live side to compare with).
    const replay = new ReplayProjections(ds);
    await replay.fromArchive({});
    await replay.swap(PROJECTIONS, EVENTS);
    await ds.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements').catch(() => undefined);
    const counted = async () => {
      const [r] = await ds.query(`SELECT xact_commit::bigint::text AS commits FROM pg_stat_database WHERE datname = current_database()`);
      return Number(r.commits);
    };
    let statements = 0;
    const query = ds.query.bind(ds);
    (ds as unknown as { query: typeof ds.query }).query = ((...args: Parameters<typeof ds.query>) => {
      statements += 1;
      return query(...args);
    }) as typeof ds.query;
    const commits0 = await counted();
    const cpu0 = process.cpuUsage();
    const summary = await replay.fromArchive({}, (p) => {
      if (p.events % 50_000 < 5000) process.stderr.write(`  ${p.events}/${p.total}\r`);
    });
    const cpu = process.cpuUsage(cpu0);
    const commits = (await counted()) - commits0;
    const verifyT = performance.now();
    const diffs = await replay.verify(PROJECTIONS, summary.archiveHead);
    const verifyS = (performance.now() - verifyT) / 1000;
    const [counts] = await ds.query(`SELECT (SELECT count(*) FROM ledger_replay.timeline_entry)::int AS timeline, (SELECT count(*) FROM ledger_replay.journal_entry)::int AS journal,
      (SELECT count(*) FROM ledger_replay.journal_day)::int AS days`);
    const results = {
      events: summary.events, loadSeconds: +loadS.toFixed(1), replaySeconds: +summary.seconds.toFixed(2), eventsPerSecond: summary.eventsPerSecond,
      rows: counts, sqlStatementsPer1000Events: +((statements / summary.events) * 1000).toFixed(2), transactionsPer1000Events: +((commits / summary.events) * 1000).toFixed(2),
      nodeCpuMicrosecondsPerEvent: +((cpu.user + cpu.system) / summary.events).toFixed(1), verifySeconds: +verifyS.toFixed(2), differences: diffs.length, goalEventsPerSecond: 20_000,
    };
    process.stdout.write(`replay of ${results.events.toLocaleString('en')} archived events into timelines + journal + daily balances\n`);
    process.stdout.write(`  ${results.eventsPerSecond.toLocaleString('en')} events/s (${results.replaySeconds} s; goal ≥ 20,000), rows ${JSON.stringify(counts)}\n`);
    process.stdout.write(`  SQL statements per 1,000 events ${results.sqlStatementsPer1000Events}, transactions per 1,000 events ${results.transactionsPer1000Events}, Node CPU ${results.nodeCpuMicrosecondsPerEvent} µs/event\n`);
    process.stdout.write(`  verify (row-by-row hash diff) ${results.verifySeconds} s, differences ${results.differences}\n`);
    const out = path.resolve(__dirname, '../results');
    mkdirSync(out, { recursive: true });
    writeFileSync(path.join(out, 'replay.json'), JSON.stringify({ at: new Date().toISOString(), machine: { cpus: os.cpus().length, node: process.version }, ...results }, null, 2) + '\n');
  } finally {
    await ds.destroy();
    await db.drop();
  }
}

main().then(() => process.exit(0), (e) => {
  process.stderr.write(`${String(e?.stack ?? e)}\n`);
  process.exit(1);
});
