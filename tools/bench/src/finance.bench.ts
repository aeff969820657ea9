/**
 * Finance API benchmark: balance as of any time at 1,000,000 journal entries (goal ≤ 10 ms p50),
 * through the ledger's Journal statements on a real PostgreSQL — the daily roll-up against the plain sum over the
 * journal (the same answer, the old query) in the same run; plus a month's statement of one owner and a journal page.
 * Writes tools/bench/results/finance.json. Run: `npm run bench:finance` (a few minutes: loading the entries).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Journal, ledgerDataSourceOptions, StatementUseCase } from '@tollgate/ledger-service';
import { openServiceDataSource } from '@tollgate/persistence';
import { createTestDatabase } from '@tollgate/testing';
import { stats } from './bench-stats';

const ENTRIES = Number(process.env['BENCH_ENTRIES'] ?? 1_000_000);
const OWNERS = 10_000;
const DAYS = 365;
const T0 = Date.parse('2026-01-01T00:00:00Z');
const SAMPLES = 2000;

async function timed(n: number, f: (i: number) => Promise<unknown>) {
  for (let i = 0; i < 50; i++) await f(i);
  const samples: number[] = [];
  const wall = performance.now();
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await f(i);
    samples.push(performance.now() - t);
  }
  return stats(samples, performance.now() - wall);
}

async function main(): Promise<void> {
  const db = await createTestDatabase('tollgate_bench_finance');
  const ds = await openServiceDataSource(ledgerDataSourceOptions(db.url));
  try {
    const t0 = performance.now();
    // Entries in postings of two lines (a deposit: external → owner available), spread over a year, loaded through the
    // same insert path the consumer uses (the daily roll-up trigger runs for every statement).
    for (let done = 0; done < ENTRIES; done += 100_000) {
      await ds.query(
        `INSERT INTO ledger.journal_entry (posting_id, seq, kind, intent_id, account, asset, amount, occurred_at, event_id)
         SELECT 'dep:' || (($1::bigint + g) / 2), ($1::bigint + g) % 2, 'deposit', NULL,
                CASE WHEN ($1::bigint + g) % 2 = 0 THEN 'owner:o' || ((($1::bigint + g) / 2) % ${OWNERS}) || ':available' ELSE 'external' END, 'USDC',
                CASE WHEN ($1::bigint + g) % 2 = 0 THEN 100 ELSE -100 END,
                to_timestamp(${T0 / 1000} + ((($1::bigint + g) / 2) * 7919 % (${DAYS} * 86400))), gen_random_uuid()
           FROM generate_series(0, 99999) g`, [done]);
    }
    await ds.query('ANALYZE ledger.journal_entry; ANALYZE ledger.journal_day');
    const loadS = (performance.now() - t0) / 1000;
    const at = (i: number) => new Date(T0 + ((i * 104_729) % (DAYS * 86_400)) * 1000);
    const owner = (i: number) => `o${(i * 7_753) % OWNERS}`;
    const rollup = await timed(SAMPLES, (i) => Journal.balancesAsOf(ds, { ownerId: owner(i) }, at(i)));
    const plain = await timed(200, (i) => ds.query(
      `SELECT account, asset, sum(amount)::text AS balance FROM ledger.journal_entry WHERE starts_with(account, $1) AND occurred_at <= $2 GROUP BY account, asset`, [`owner:${owner(i)}:`, at(i)]));
    const provider = await timed(200, (i) => Journal.balancesAsOf(ds, { providerId: 'none' }, at(i)));
    const statements = new StatementUseCase(ds);
    const statement = await timed(200, (i) => statements.json({ ownerId: owner(i) }, at(i), new Date(at(i).getTime() + 30 * 86_400_000)));
    const page = await timed(500, (i) => Journal.page(ds, { ownerId: owner(i) }, undefined, 100));
    const results = { entries: ENTRIES, loadSeconds: +loadS.toFixed(1), balanceAsOfOwner: rollup, plainSumOwner: plain, balanceAsOfProvider: provider, statementMonth: statement, journalPage100: page, sqlStatementsPerBalance: 1 };
    const line = (k: string, s: { p50Ms: number; p99Ms: number; throughputPerS: number }) => process.stdout.write(`  ${k}: p50 ${s.p50Ms} ms, p99 ${s.p99Ms} ms, ${s.throughputPerS}/s\n`);
    process.stdout.write(`finance API on ${ENTRIES.toLocaleString('en')} journal entries (${OWNERS} owners, ${DAYS} days; loaded in ${results.loadSeconds} s)\n`);
    line('balance as of a time, one owner (daily roll-up)', rollup);
    line('the same by a plain sum over the journal (before)', plain);
    line('balance as of a time, one provider', provider);
    line('statement of one owner over 30 days', statement);
    line('journal page of 100, one owner', page);
    const out = path.resolve(__dirname, '../results');
    mkdirSync(out, { recursive: true });
    writeFileSync(path.join(out, 'finance.json'), JSON.stringify({ at: new Date().toISOString(), machine: { cpus: os.cpus().length, node: process.version }, ...results }, null, 2) + '\n');
  } finally {
    await ds.destroy();
    await db.drop();
  }
}

main().then(() => process.exit(0), (e) => {
  process.stderr.write(`${String(e?.stack ?? e)}\n`);
  process.exit(1);
});
