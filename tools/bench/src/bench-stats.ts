import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/** p50/p99/max of latency samples (ms) and throughput over the wall time of the run. */
export function stats(samples: number[], wallMs: number) {
  const s = [...samples].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))]!;
  return { n: s.length, p50Ms: +q(0.5).toFixed(3), p99Ms: +q(0.99).toFixed(3), maxMs: +s[s.length - 1]!.toFixed(3), throughputPerS: +((s.length / wallMs) * 1000).toFixed(1) };
}

export type Stats = ReturnType<typeof stats>;

/** Runs `one` n times with `concurrency` workers; returns the latency stats. */
export async function measure(n: number, concurrency: number, one: (i: number) => Promise<void>): Promise<Stats> {
  const samples: number[] = [];
  let next = 0;
  const wall = performance.now();
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < n) {
      const i = next++;
      const start = performance.now();
      await one(i);
      samples.push(performance.now() - start);
    }
  }));
  return stats(samples, performance.now() - wall);
}

/**
 * The results file of a benchmark that runs per mode: the figures already there (other modes keep their last run),
 * the modes asked for (`BENCH_MODES`, default `all`), and a writer that stamps the run and keeps the file current.
 */
export function modeResults(name: string, all: readonly string[]) {
  const dir = path.resolve(__dirname, '../results');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `${name}.json`);
  let previous: Record<string, unknown> = {};
  try {
    previous = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    // first run
  }
  const result: Record<string, unknown> = { ...previous, at: new Date().toISOString(), machine: { cpus: os.cpus().length, node: process.version } };
  const modes = (process.env['BENCH_MODES'] ?? all.join(',')).split(',');
  return {
    file,
    wants: (mode: string) => modes.includes(mode),
    record(mode: string, figures: Record<string, unknown>) {
      result[mode] = { ...figures, at: new Date().toISOString() };
      writeFileSync(file, JSON.stringify(result, null, 2) + '\n');
    },
  };
}
