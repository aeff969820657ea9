/**
 * Where a process's CPU went, from a V8 .cpuprofile (node --cpu-prof): self time by package (node_modules/<pkg>, the
 * workspace's libs/apps, node internals) and the top functions. Used to profile the gateway's overhead:
 *
 *   BENCH_CPU_PROFILE=/tmp/prof BENCH_MODES=embedded npm run bench:backbone   (distributed: one profile per service)
 *   node -r @swc-node/register tools/bench/src/cpu-profile-summary.ts /tmp/prof/<the embedded host's file>.cpuprofile
 */
import { readFileSync } from 'node:fs';

interface ProfileNode { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }
interface Profile { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] }

function packageOf(url: string): string {
  if (!url) return '(native/gc/idle)';
  const nm = url.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = url.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const ws = /\/(libs\/(?:services\/)?[^/]+|apps\/[^/]+|tools\/[^/]+)\//.exec(url);
  if (ws) return ws[1]!;
  return url.startsWith('node:') ? 'node:internal' : url;
}

function summarize(file: string, top = 25): void {
  const p = JSON.parse(readFileSync(file, 'utf8')) as Profile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  p.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0)));
  const total = [...self.values()].reduce((a, b) => a + b, 0);
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id)!;
    byPackage.set(packageOf(n.callFrame.url), (byPackage.get(packageOf(n.callFrame.url)) ?? 0) + us);
    const fn = `${n.callFrame.functionName || '(anonymous)'} ${n.callFrame.url.replace(/^.*node_modules\//, '').replace(/^file:\/\/.*\/(libs|apps|tools)\//, '$1/')}:${n.callFrame.lineNumber + 1}`;
    byFunction.set(fn, (byFunction.get(fn) ?? 0) + us);
  }
  const pct = (us: number) => `${((100 * us) / total).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms`;
  process.stdout.write(`${file}: ${(total / 1e6).toFixed(1)} s sampled\n\nby package:\n`);
  for (const [k, v] of [...byPackage].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`  ${pct(v)}  ${k}\n`);
  process.stdout.write('\nby function (self):\n');
  for (const [k, v] of [...byFunction].sort((a, b) => b[1] - a[1]).slice(0, top)) process.stdout.write(`  ${pct(v)}  ${k}\n`);
}

for (const f of process.argv.slice(2)) summarize(f);
