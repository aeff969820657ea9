/**
 * The distributed system the benchmarks measure: every service its own process, on the local Kafka and the machine's
 * PostgreSQL server — the same target shape as the embedded one (`onEmbedded`), so a benchmark runs on both.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Client as PgClient } from 'pg';
import { startDistributedSystem, WORKSPACE_ROOT } from '@tollgate/testing';
import { cpuSecondsOf, processesCpuSeconds, rssOf, type Target } from './bench-system';

/** The local broker's process (infra/kafka), when it runs here: its CPU is part of a distributed call's cost too. */
function localKafkaPid(): Record<string, number> {
  const file = path.join(WORKSPACE_ROOT, 'infra/kafka/.data/kafka.pid');
  return existsSync(file) ? { kafka: Number(readFileSync(file, 'utf8').trim()) } : {};
}

/** Every app its own process, on the local Kafka and the PostgreSQL server of the machine. */
export async function onDistributed<R>(measureOn: (t: Target) => Promise<R>): Promise<R> {
  const names = ['gateway', 'discovery', 'execution', 'payment', 'settlement', 'ledger', 'sample-providers'] as const;
  // BENCH_CPU_PROFILE=<dir> writes a V8 CPU profile of every service when it stops (file names carry the pid).
  const profile = process.env['BENCH_CPU_PROFILE'];
  const system = await startDistributedSystem(names, { LOG_LEVEL: 'warn', SETTLEMENT_VERIFICATION_WINDOW_MS: '200', OUTBOX_POLL_INTERVAL_MS: '1000' }, undefined,
    profile ? { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profile}`] } : {});
  const pg = new PgClient({ connectionString: system.db.url });
  pg.on('error', () => undefined);
  await pg.connect();
  try {
    const statements = await pg.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements').then(() => pg.query('SELECT 1 FROM pg_stat_statements LIMIT 1')).then(() => true, () => false);
    const services = system.processes.filter((p) => p.name !== 'sample-providers').map((p) => p.child.pid!);
    if (profile) process.stdout.write(`profiles in ${profile}: ${system.processes.map((p) => `${p.name} ${p.child.pid}`).join(', ')}\n`);
    const target: Target = {
      urls: { gateway: system.url('gateway'), discovery: system.url('discovery'), payment: system.url('payment') },
      admin: system.adminToken, upstream: `${system.url('sample-providers')}/providers/text-tools/mcp`, upstreamToken: system.providersToken, pg, statements,
      cpu: () => processesCpuSeconds(services), rssMb: () => rssOf(services),
      cpuByService: () => cpuSecondsOf({ ...Object.fromEntries(system.processes.map((p) => [p.name, p.child.pid!])), ...localKafkaPid() }),
      metrics: { urls: system.processes.filter((p) => p.name !== 'sample-providers').map((p) => `${system.url(p.name)}/metrics`), token: system.metricsToken },
    };
    return await measureOn(target);
  } finally {
    await pg.end().catch(() => undefined);
    await system.stop();
  }
}
