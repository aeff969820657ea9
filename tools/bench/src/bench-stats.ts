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
