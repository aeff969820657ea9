/**
 * `tollgate-ops replay` (issue 13 point 4): rebuilds the ledger's projections — call timelines, the journal and its
 * daily balances — into shadow tables (schema `ledger_replay`) from the ledger's event archive (default) or from the
 * topics (Kafka, or the embedded mode's log), from the start, a position/offset or a time, with a progress bar.
 *   --verify   compare rebuilt and live row by row (by hash); print every difference; exit 1 on any
 *   --swap     make the rebuilt tables live atomically (the live ones move to `ledger_retired`); with --verify, only
 *              when there is no difference
 * Connects to the ledger's database directly (DATABASE_URL); the ledger may keep running: verify and swap catch up
 * with what it consumed meanwhile.
 */
import 'reflect-metadata';
import { Command, InvalidArgumentError, Option } from 'commander';
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
  const started = performance.now();
  let begun = false;
  return {
    update(done: number, total: number) {
      if (!enabled) return;
      if (!begun) bar.start(Math.max(total, 1), 0, { rate: 0 });
      begun = true;
      bar.setTotal(Math.max(total, done, 1));
      bar.update(done, { rate: Math.round(done / Math.max((performance.now() - started) / 1000, 1e-3)) });
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
    const onProgress = (p: { events: number; total: number }) => bar.update(p.events, p.total);
    const summary: ReplaySummary & { refused?: number } = o.source === 'archive'
      ? await replay.fromArchive({ position: o.fromPosition, time: o.fromTime }, onProgress)
      : await replay.fromTopics(await topicHistory(o, ds), onProgress);
    bar.stop();
    const result: Record<string, unknown> = { source: o.source, projections: o.projections, ...summary };
    let diffs: ProjectionDiff[] = [];
    if (o.verify) {
      diffs = await replay.verify(o.projections, summary.archiveHead, { ignoreRecordedAt: o.source === 'topics' });
      result['differences'] = diffs;
    }
    if (o.swap && diffs.length === 0) result['swappedAtArchivePosition'] = await replay.swap(o.projections, summary.archiveHead);
    else if (o.swap) result['swapped'] = false;
    print(o.json, result, () => humanSummary(result, diffs, o));
    if (diffs.length > 0) process.exitCode = 1;
  } finally {
    bar.stop();
    await ds.destroy();
  }
}

function humanSummary(r: Record<string, unknown>, diffs: ProjectionDiff[], o: ReplayOptions): string {
  const lines = [`replayed ${r['events']} events from the ${o.source} in ${Number(r['seconds']).toFixed(2)} s (${r['eventsPerSecond']} events/s) into ledger_replay: ${o.projections.join(', ')}`];
  if (r['refused']) lines.push(`${r['refused']} messages did not decode against their contract and were skipped (the live consumer parked them)`);
  if (o.verify) {
    lines.push(diffs.length === 0 ? 'verify: the rebuilt projections equal the live ones, row by row' : `verify: ${diffs.length} rows differ`);
    for (const d of diffs) lines.push(`  ${d.table} ${d.key}: live ${d.live ?? '(missing)'} rebuilt ${d.rebuilt ?? '(missing)'}`);
  }
  if (r['swappedAtArchivePosition'] !== undefined) lines.push(`swapped: the rebuilt tables are live (caught up to archive position ${r['swappedAtArchivePosition']}); the old ones are in ledger_retired`);
  if (r['swapped'] === false) lines.push('not swapped: verify found differences');
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
    .option('--swap', 'make the rebuilt projections live (with --verify: only when nothing differs)')
    .option('--no-progress', 'no progress bar')
    .option('--json', 'print the result as JSON')
    .addHelpText('after', '\nExit codes: 0 done (and equal, with --verify); 1 verify found differences; 2 could not run.')
    .action((o: ReplayOptions) => run(o));
}
