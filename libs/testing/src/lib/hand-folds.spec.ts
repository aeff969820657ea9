import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.join(__dirname, '../../../..');

function sources(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'test') continue;
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) sources(full, out);
    else if (name.endsWith('.ts') && !/\.(spec|test)\.ts$/.test(name)) out.push(path.relative(ROOT, full));
  }
  return out;
}

/**
 * The files of the services that still fold a call's state by hand (`evolve`, `foldCall`) instead of deciding through
 * the workflow runner — each with why. The list only shrinks: a new hand fold fails this spec; moving one of these onto
 * the runner fails it too, until its line goes.
 */
const HAND_FOLDS: Record<string, string> = {
  // The agent's request itself (the route's first step reads nothing): the row is born with CallRequested folded in.
  'libs/services/gateway/src/lib/call-tool/call-tool.usecase.ts': 'the request recorded',
  // A view: the finance timeline shows the state of the facts it lists; it decides nothing.
  'libs/services/ledger/src/lib/get-call-timeline/get-call-timeline.usecase.ts': 'a read model',
};

describe('every service decides a call through the runner (R1: one model of the call\'s life)', () => {
  it('no service folds a call by hand outside the known list, and the list holds only files that still do', () => {
    const files = sources(path.join(ROOT, 'libs/services'));
    expect(files.length).toBeGreaterThan(150);
    const folding = files.filter((f) => /\b(evolve|foldCall)\(/.test(readFileSync(path.join(ROOT, f), 'utf8'))).sort();
    expect(folding).toEqual(Object.keys(HAND_FOLDS).sort());
  });
});
