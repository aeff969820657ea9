import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '../../../..');

function codeFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) codeFiles(full, out);
    else if (/\.(ts|js|mjs|sh)$/.test(name)) out.push(path.relative(ROOT, full));
  }
  return out;
}

/** STYLE: a comment says why, not which ticket — the code outlives the tracker; commits and notes carry the issue. */
describe('no issue numbers in the code', () => {
  it('no source, test, bench or script names an issue by number', () => {
    const files = ['apps', 'libs', 'tools', 'infra'].flatMap((d) => codeFiles(path.join(ROOT, d)));
    expect(files.length).toBeGreaterThan(300);
    const pattern = new RegExp(['[Ii]ssues?', '[0-9]+'].join(' '));
    const naming = files.filter((f) => pattern.test(readFileSync(path.join(ROOT, f), 'utf8')));
    expect(naming).toEqual([]);
  });
});
