import { readFileSync } from 'node:fs';
import path from 'node:path';
import { DeadLetterParked } from './events';
import { ServiceEvents } from './service-events';

/** The README's services table says exactly what the code declares each service emits and consumes. */
describe('README services table', () => {
  const readme = readFileSync(path.resolve(__dirname, '../../../../README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Services'), readme.indexOf('## Running distributed'));
  const rows = new Map(section.split('\n').filter((l) => /^\| [a-z]+ \|/.test(l) && !l.startsWith('| service |')).map((l) => {
    const cells = l.split('|').slice(1, -1).map((c) => c.trim());
    const events = (cell: string) => [...cell.matchAll(/`([A-Za-z]+)`/g)].map((m) => m[1]!).sort();
    return [cells[0]!, { emits: events(cells[2]!), consumes: events(cells[3]!) }] as const;
  }));
  const names = (list: readonly { type: string }[]) => list.map((e) => e.type).filter((t) => t !== DeadLetterParked.type).sort();

  it('lists every service once', () => {
    expect([...rows.keys()].sort()).toEqual(Object.keys(ServiceEvents).sort());
  });

  it.each(Object.entries(ServiceEvents))('%s: emits and consumes as declared in code', (service, declared) => {
    expect(rows.get(service)).toEqual({ emits: names(declared.emits), consumes: names(declared.consumes) });
  });
});
