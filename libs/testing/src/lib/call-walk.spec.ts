import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The README's walk of one paid call names files and their exports: both must be true of the code. */
const ROOT = path.join(__dirname, '../../../..');
const readme = readFileSync(path.join(ROOT, 'libs/call-life/README.md'), 'utf8');
const section = readme.slice(readme.indexOf('## The walk of one paid call'), readme.indexOf('## The route of a call'));
const steps = [...section.matchAll(/^\s*\d+\. `([^`]+)` — `([A-Za-z0-9_]+)`/gm)].map((m) => ({ file: m[1]!, name: m[2]! }));

describe('the walk of one paid call (libs/call-life/README.md) is true to the code', () => {
  it('names at most ten files, in order, each once', () => {
    expect(steps.length).toBeGreaterThanOrEqual(8);
    expect(steps.length).toBeLessThanOrEqual(10);
    expect(new Set(steps.map((s) => s.file)).size).toBe(steps.length);
  });

  it.each(steps.map((s) => [s.file, s.name]))('%s exists and exports %s', (file, name) => {
    const full = path.join(ROOT, file);
    expect(existsSync(full)).toBe(true);
    expect(readFileSync(full, 'utf8')).toMatch(new RegExp(`^export (async )?(class|function|const|interface|type) ${name}\\b`, 'm'));
  });
});
