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

/** A service's folders (the first level under src/lib) and the folders each one imports from. */
function folderArrows(service: string): Map<string, Set<string>> {
  const lib = path.join(ROOT, 'libs/services', service, 'src/lib');
  const folderOf = (file: string) => path.relative(lib, file).split(path.sep)[0]!;
  const arrows = new Map<string, Set<string>>();
  for (const file of sources(lib)) {
    const from = folderOf(file);
    for (const target of importsOf(file)) {
      const to = folderOf(target);
      if (to !== from && !to.startsWith('..') && !to.endsWith('.ts')) arrows.set(from, (arrows.get(from) ?? new Set()).add(to));
    }
  }
  return arrows;
}

/** The arrows between folders that point back up: `a → b` where `b` also reaches `a`. */
function backArrows(arrows: Map<string, Set<string>>): string[] {
  const reaches = (from: string, to: string, seen = new Set<string>()): boolean =>
    [...(arrows.get(from) ?? [])].some((next) => next === to || (!seen.has(next) && (seen.add(next), reaches(next, to, seen))));
  return [...arrows].flatMap(([a, bs]) => [...bs].filter((b) => reaches(b, a)).map((b) => `${a} → ${b}`)).sort();
}

/** STYLE (a newcomer's entry): a service's use-case folders read top-down — no folder reaches back to one that imports it. */
describe('no knots among the folders of a service', () => {
  it.each(['discovery', 'execution', 'gateway', 'ledger', 'payment', 'settlement'])('%s: no arrow between its folders points back up', (service) => {
    const arrows = folderArrows(service);
    expect(arrows.size).toBeGreaterThan(0);
    expect(backArrows(arrows)).toEqual([]);
  });

  it('sees a knot where there is one', () => {
    expect(backArrows(new Map([['a', new Set(['b'])], ['b', new Set(['c'])], ['c', new Set(['a'])], ['d', new Set(['a'])]]))).toEqual(['a → b', 'b → c', 'c → a']);
  });
});
