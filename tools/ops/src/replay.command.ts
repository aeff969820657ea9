/**
 * `tollgate-ops replay`: rebuilds the ledger's projections — call timelines, the journal and its
 * daily balances — into shadow tables (schema `ledger_replay`) from the ledger's event archive (default) or from the
 * topics (Kafka, or the embedded mode's log), from the start, a position/offset or a time, with a progress bar.
 *   --verify   compare rebuilt and live row by row; print every differing row with each differing column and both
 *              values; exit 1 on any
 *   --swap     make the rebuilt tables live atomically (the live ones move to `ledger_retired`) — always verified
 *              first, and only when nothing differs; a rebuild that differs is swapped only with
 *              `--accept-differences` and a confirmation (typing "swap" at the prompt, or `--yes`)
 * Connects to the ledger's database directly (DATABASE_URL); the ledger may keep running: verify and swap catch up
 * with what it consumed meanwhile.
 */
import 'reflect-metadata';
import { Command, InvalidArgumentError, Option } from 'commander';
import { createInterface } from 'node:readline/promises';
import { SingleBar } from 'cli-progress';
import { DataSource } from 'typeorm';
import { ledgerDataSourceOptions, LEDGER_TOPICS, type ProjectionDiff, type ProjectionName, PROJECTIONS, ReplayProjections, type ReplaySummary } from '@tollgate/ledger-service';
import { readEventLogHistory, readKafkaHistory, type TopicHistory } from '@tollgate/messaging';
import { print } from './cli-output';

interface ReplayOptions {
  databaseUrl: string;
  source: 'archive' | 'topics';
  brokers?: string;
  topicPrefix?: string;
  fromPosition?: number;
  fromOffset?: number;
  fromTime?: Date;
  projections: ProjectionName[];
  verify?: boolean;
  swap?: boolean;
  acceptDifferences?: boolean;
  yes?: boolean;
  progress: boolean;
  json?: boolean;
}

const int = (v: string) => {
  if (!/^\d{1,15}$/.test(v)) throw new InvalidArgumentError('a non-negative integer');
  return Number(v);
};
const time = (v: string) => {
  const t = new Date(v);
  if (Number.isNaN(t.getTime())) throw new InvalidArgumentError('an ISO 8601 time');
  return t;
};
/** The journal and its daily balances are one projection pair: rebuilding either rebuilds both. */
const projections = (v: string): ProjectionName[] => {
  const names = v.split(',').map((s) => s.trim());
  const bad = names.filter((n) => !PROJECTIONS.includes(n as ProjectionName));
  if (bad.length) throw new InvalidArgumentError(`unknown projection ${bad.join(', ')}; choose from ${PROJECTIONS.join(', ')}`);
  const chosen = new Set(names as ProjectionName[]);
  if (chosen.has('journal') || chosen.has('balances')) ['journal', 'balances'].forEach((n) => chosen.add(n as ProjectionName));
  return PROJECTIONS.filter((p) => chosen.has(p));
};

function progressBar(enabled: boolean) {
  const bar = new SingleBar({ format: 'replay |{bar}| {percentage}% {value}/{total} events | {rate} events/s | ETA {eta_formatted}', hideCursor: true, stream: process.stderr, noTTYOutput: enabled, notTTYSchedule: 2000 });
  let begun = false;
  return {
    /** `rate`: the replay's own events/s figure, the same the summary prints (one figure). */
    update(done: number, total: number, rate: number) {
      if (!enabled) return;
      if (!begun) bar.start(Math.max(total, 1), 0, { rate: 0 });
      begun = true;
      bar.setTotal(Math.max(total, done, 1));
      bar.update(done, { rate });
    },
    stop: () => begun && bar.stop(),
  };
}

async function topicHistory(o: ReplayOptions, ds: DataSource): Promise<TopicHistory> {
  const from = { offset: o.fromOffset, time: o.fromTime };
  if (o.brokers === 'embedded') return readEventLogHistory(ds, LEDGER_TOPICS, from);
  if (!o.brokers) throw new InvalidArgumentError('--brokers (or KAFKA_BROKERS) is required to replay from the topics; "embedded" reads the embedded log');
  return readKafkaHistory(o.brokers.split(','), LEDGER_TOPICS, from, o.topicPrefix ?? '');
}

async function run(o: ReplayOptions): Promise<void> {
  const ds = await new DataSource(ledgerDataSourceOptions(o.databaseUrl)).initialize();
  const bar = progressBar(o.progress && !o.json);
  try {
    const replay = new ReplayProjections(ds);
    const started = performance.now();
    const onProgress = (p: { events: number; total: number }) => bar.update(p.events, p.total, Math.round(p.events / Math.max((performance.now() - started) / 1000, 1e-6)));
    const summary: ReplaySummary & { refused?: number } = o.source === 'archive'
      ? await replay.fromArchive({ position: o.fromPosition, time: o.fromTime }, onProgress)
      : await replay.fromTopics(await topicHistory(o, ds), onProgress);
    bar.update(summary.events, summary.events, summary.eventsPerSecond);
    bar.stop();
    const result: Record<string, unknown> = { source: o.source, projections: o.projections, ...summary };
    let diffs: ProjectionDiff[] = [];
    // A swap is always verified first.
    if (o.verify || o.swap) {
      diffs = await replay.verify(o.projections, summary.archiveHead, { ignoreRecordedAt: o.source === 'topics' });
      result['differences'] = diffs;
    }
    if (o.swap && (diffs.length === 0 || (o.acceptDifferences && (await confirmed(o, diffs.length))))) {
      result['swappedAtArchivePosition'] = await replay.swap(o.projections, summary.archiveHead);
    } else if (o.swap) {
      result['swapped'] = false;
    }
    print(o.json, result, () => humanSummary(result, diffs, o));
    // Differences are a "no" (exit 1) — unless the operator accepted them and the rebuild is now live.
    if (diffs.length > 0 && result['swappedAtArchivePosition'] === undefined) process.exitCode = 1;
  } finally {
    bar.stop();
    await ds.destroy();
  }
}

/** A differing row for people: missing on one side, or each differing column with the live and the rebuilt value. */
function describeDiff(d: ProjectionDiff): string[] {
  if (!d.live) return [`  ${d.table} ${d.key}: missing from the live table (the rebuild has it)`];
  if (!d.rebuilt) return [`  ${d.table} ${d.key}: only in the live table (the rebuild does not have it)`];
  return [`  ${d.table} ${d.key}:`, ...d.columns.map((c) => `      ${c.column}: live ${c.live ?? 'NULL'} | rebuilt ${c.rebuilt ?? 'NULL'}`)];
}

/** Swapping a rebuild that differs from the live tables replaces the live data: the operator confirms it. */
async function confirmed(o: ReplayOptions, differences: number): Promise<boolean> {
  if (o.yes) return true;
  if (!process.stdin.isTTY) {
    process.stderr.write(`replay: the rebuild differs in ${differences} rows; confirm with --yes (no terminal to ask)\n`);
    return false;
  }
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`The rebuild differs from the live projections in ${differences} rows. Make it live anyway? Type "swap" to confirm: `);
    return answer.trim() === 'swap';
  } finally {
    rl.close();
  }
}

function humanSummary(r: Record<string, unknown>, diffs: ProjectionDiff[], o: ReplayOptions): string {
  const lines = [`replayed ${r['events']} events from the ${o.source} in ${Number(r['seconds']).toFixed(2)} s (${r['eventsPerSecond']} events/s) into ledger_replay: ${o.projections.join(', ')}`];
  if (r['refused']) lines.push(`${r['refused']} messages did not decode against their contract and were skipped (the live consumer parked them)`);
  if (o.verify || o.swap) {
    lines.push(diffs.length === 0 ? 'verify: the rebuilt projections equal the live ones, row by row' : `verify: ${diffs.length} rows differ`);
    for (const d of diffs) lines.push(...describeDiff(d));
  }
  if (r['swappedAtArchivePosition'] !== undefined) lines.push(`swapped: the rebuilt tables are live (caught up to archive position ${r['swappedAtArchivePosition']}); the old ones are in ledger_retired`);
  if (r['swapped'] === false) {
    lines.push(o.acceptDifferences ? 'not swapped: not confirmed' : 'not swapped: verify found differences (to make the rebuilt tables live anyway: --swap --accept-differences, then confirm)');
  }
  return lines.join('\n');
}

export function replayCommand(): Command {
  return new Command('replay')
    .description('Rebuild the ledger projections into shadow tables from the archive or the topics; verify against live; swap.')
    .option('--database-url <url>', 'the ledger\'s PostgreSQL', process.env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/tollgate')
    .addOption(new Option('--source <source>', 'where the events come from').choices(['archive', 'topics']).default('archive'))
    .option('--brokers <list>', 'Kafka brokers for --source topics, or "embedded" for the embedded mode\'s log', process.env['KAFKA_BROKERS'])
    .option('--topic-prefix <prefix>', 'the deployment\'s topic prefix (KAFKA_TOPIC_PREFIX)', process.env['KAFKA_TOPIC_PREFIX'])
    .option('--from-position <n>', 'archive: the first position to replay', int)
    .option('--from-offset <n>', 'topics: the first offset of each partition (the log position in embedded mode)', int)
    .option('--from-time <iso>', 'the first event archived (or published) at or after this time', time)
    .option('--projections <list>', `which to rebuild: ${PROJECTIONS.join(', ')}`, projections, [...PROJECTIONS])
    .option('--verify', 'compare the rebuilt projections with the live ones row by row; exit 1 on any difference')
    .option('--swap', 'make the rebuilt projections live; verified first, swapped only when nothing differs')
    .option('--accept-differences', 'with --swap: make a rebuild that differs live too (asks to confirm)')
    .option('--yes', 'with --accept-differences: confirm without asking')
    .option('--no-progress', 'no progress bar')
    .option('--json', 'print the result as JSON')
    .addHelpText('after', '\nExit codes: 0 done (and equal, with --verify); 1 verify found differences; 2 could not run.')
    .action((o: ReplayOptions) => run(o));
}
