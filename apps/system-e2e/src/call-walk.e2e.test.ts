/**
 * The walk of one paid call in libs/call-life/README.md is produced from a real call (R1–R5: the call's life, one
 * model, one runner): the embedded host serves one paid call with V8 logging every function it enters for the first
 * time, and the project files entered between the call's start and its hold's capture, in the order first entered,
 * must be the README's list. `WRITE_WALK=1` rewrites the list from the call recorded.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { displaced, recordPaidCall, WALK_README, walkInReadme, walkOf, writeWalk } from './call-walk';

jest.setTimeout(300_000);

/** How far a file may move from one run to the next (the process's clocks), and still be at its place. */
const SLACK = 10;

describe('the walk of one paid call (libs/call-life/README.md)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-walk-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const record = async (n: number) => walkOf(await recordPaidCall(path.join(dir, `v8-${n}.log`)));

  it('lists the files one real paid call enters, in the order it first enters them', async () => {
    let walk = await record(1);
    if (process.env['WRITE_WALK'] === '1') writeWalk(walk);
    const written = walkInReadme(readFileSync(WALK_README, 'utf8'));
    const same = (w: readonly string[]) => [...w].sort().join() === [...written].sort().join() && displaced(written, w, SLACK).length === 0;
    // A second call when the first differs: a clock of the process may have entered one of its files mid-call.
    if (!same(walk)) walk = await record(2);
    expect({ missing: walk.filter((f) => !written.includes(f)), extra: written.filter((f) => !walk.includes(f)) }).toEqual({ missing: [], extra: [] });
    expect(displaced(written, walk, SLACK)).toEqual([]);
    expect(written.length).toBeGreaterThan(40);
  });
});
