import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '../../../..');

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name === 'test') continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) sources(full, out);
    else if (name.endsWith('.ts') && !name.endsWith('.spec.ts')) out.push(full);
  }
  return out;
}

/** The files a file imports by relative path (type-only imports included: they tie the two files together too). */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const targets = [...text.matchAll(/^(?:import|export)[^'"]*?from '(\.[^']+)'/gm)].map((m) => path.resolve(path.dirname(file), m[1]!));
  return targets.map((t) => [`${t}.ts`, path.join(t, 'index.ts')].find((c) => existsSync(c))).filter((t): t is string => t !== undefined);
}

/** Every cycle of relative imports among these files, each as the list of files around it. */
function circles(files: string[]): string[][] {
  const edges = new Map(files.map((f) => [f, importsOf(f)]));
  const found = new Map<string, string[]>();
  const visit = (f: string, trail: string[]) => {
    const at = trail.indexOf(f);
    if (at >= 0) {
      const cycle = trail.slice(at).map((x) => path.relative(ROOT, x));
      found.set([...cycle].sort().join(' '), cycle);
      return;
    }
    if (trail.length > 30) return;
    for (const next of edges.get(f) ?? []) visit(next, [...trail, f]);
  };
  for (const f of files) visit(f, []);
  return [...found.values()];
}

/** STYLE: no import circles — each file can be read knowing only what it imports. */
describe('no import circles in the services and the messaging kit', () => {
  it('no file of libs/services or libs/messaging reaches itself through its relative imports', () => {
    const files = [...sources(path.join(ROOT, 'libs/services')), ...sources(path.join(ROOT, 'libs/messaging/src'))];
    expect(files.length).toBeGreaterThan(150);
    expect(circles(files)).toEqual([]);
  });
});
