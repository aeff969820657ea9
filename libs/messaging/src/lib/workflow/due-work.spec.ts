import { type DataSource } from 'typeorm';
import { dueWork } from './due-work';
import { type CallWorkflow, type StoredLife } from './workflow.types';

/** A workflow whose store counts the looks for due calls (nothing is ever due): the clock alone is under test. */
function counting(dueEveryMs: number) {
  const looks: number[] = [];
  const wf: CallWorkflow<StoredLife> = {
    name: 'test.due', service: 'payment', dueEveryMs,
    dataSource: { transaction: (fn: (m: unknown) => Promise<unknown>) => fn({}) } as unknown as DataSource,
    store: { lock: async () => new Map(), save: async () => undefined, claimDue: async () => { looks.push(Date.now()); return []; } },
    decide: () => ({}),
    decideDue: () => ({}),
  };
  return { wf, looks };
}

describe('the runner\'s due clock', () => {
  it('a nudge looks for due calls at once, not at the next tick (a wake-up of 0 ms)', async () => {
    const { wf, looks } = counting(60_000);
    const clock = dueWork(wf);
    clock.start();
    clock.nudge();
    await new Promise((r) => setTimeout(r, 20));
    expect(looks).toHaveLength(1);
    await clock.stop();
  });

  it('a nudge while a look runs looks again right after it; a stopped clock ignores nudges', async () => {
    const { wf, looks } = counting(60_000);
    const clock = dueWork(wf);
    clock.start();
    clock.nudge();
    clock.nudge();
    await new Promise((r) => setTimeout(r, 30));
    expect(looks).toHaveLength(2);
    await clock.stop();
    clock.nudge();
    await new Promise((r) => setTimeout(r, 20));
    expect(looks).toHaveLength(2);
  });
});
