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

/**
 * Files that only a clock or a listener of the process enters — the outbox relay's poll, the parked events' answers,
 * the LISTEN connection's reconnect — not the call: whether one fires inside the call's window is timing (seen both
 * ways on this machine), so they count neither way. Every other file must be there.
 */
const CLOCKS = new Set([
  'libs/messaging/src/lib/outbox/outbox-relay.ts', 'libs/messaging/src/lib/inbox/parking.ts', 'libs/persistence/src/lib/channel-listener.ts',
  // Declares the messaging tables (no function of a call's path): entered in some runs only.
  'libs/messaging/src/lib/outbox/messaging-tables.ts',
  // The log's snapshot test (`isVisible`): first run by whichever log read first meets a row — boot's own events
  // before the call, as a rule, but in some runs not until the call (seen in CI).
  'libs/messaging/src/lib/transport/log-snapshot.ts',
  // Canonical JSON: booting's catalog digests run it before the call as a rule, but in some runs not until the call's
  // arguments hash (seen once in three runs here).
  'libs/contracts/src/lib/canonical-json.ts',
]);
const ofTheCall = (w: readonly string[]) => w.filter((f) => !CLOCKS.has(f));
/**
 * Files the call enters that also hold a clock's function (the consumers' re-drive timer, the runner's due work: the
 * reconciler's rounds, the verification window's end): a clock that fires first in the window enters them earlier than the call would (seen 20 and 40
 * places apart), so only their presence is checked, not their place.
 */
const SHARED_WITH_CLOCKS = new Set([
  'libs/messaging/src/lib/inbox/event-consumer.ts', 'libs/messaging/src/lib/workflow/due-work.ts',
  'libs/services/execution/src/lib/dispatch-call/reconciliations.repository.ts',
  'libs/services/settlement/src/lib/record-call-fact/verification.workflow.ts', 'libs/services/settlement/src/lib/record-call-fact/verification.repository.ts',
]);
const placed = (w: readonly string[]) => w.filter((f) => !SHARED_WITH_CLOCKS.has(f));

describe('the walk of one paid call (libs/call-life/README.md)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'tollgate-walk-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const record = async (n: number) => walkOf(await recordPaidCall(path.join(dir, `v8-${n}.log`)));

  it('lists the files one real paid call enters, in the order it first enters them', async () => {
    const recorded = await record(1);
    if (process.env['WRITE_WALK'] === '1') writeWalk(ofTheCall(recorded));
    let walk = ofTheCall(recorded);
    const written = ofTheCall(walkInReadme(readFileSync(WALK_README, 'utf8')));
    const same = (w: readonly string[]) => [...w].sort().join() === [...written].sort().join() && displaced(placed(written), placed(w), SLACK).length === 0;
    // A second call when the first differs: a clock of the process may have entered one of its files mid-call.
    if (!same(walk)) walk = ofTheCall(await record(2));
    expect({ missing: walk.filter((f) => !written.includes(f)), extra: written.filter((f) => !walk.includes(f)) }).toEqual({ missing: [], extra: [] });
    expect(displaced(placed(written), placed(walk), SLACK)).toEqual([]);
    expect(written.length).toBeGreaterThan(40);
  });
});
