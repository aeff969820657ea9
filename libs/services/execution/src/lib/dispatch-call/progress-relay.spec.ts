import { MAX_PROGRESS_MESSAGE_CHARS } from '@tollgate/contracts';
import { MAX_PROGRESS_PER_ATTEMPT, ProgressGate, relayProgress } from './progress-relay';

const ID = '00000000-0000-4000-8000-000000000001';

describe('ProgressGate (a provider\'s progress, relayed to the agent that asked)', () => {
  it('lets increasing values through with total and message, and nothing that repeats or goes back', () => {
    const gate = new ProgressGate(ID, 2);
    expect(gate.accept({ progress: 0, total: 100, message: 'start' })).toEqual({ intentId: ID, attempt: 2, progress: 0, total: 100, message: 'start' });
    expect(gate.accept({ progress: 50 })).toEqual({ intentId: ID, attempt: 2, progress: 50 });
    expect(gate.accept({ progress: 50 })).toBeUndefined();
    expect(gate.accept({ progress: 10 })).toBeUndefined();
    expect(gate.accept({ progress: 100, total: 100 })?.progress).toBe(100);
  });

  it('drops malformed numbers and bounds the message', () => {
    const gate = new ProgressGate(ID, 1);
    expect(gate.accept({ progress: Number.NaN })).toBeUndefined();
    expect(gate.accept({ progress: -1 })).toBeUndefined();
    const notice = gate.accept({ progress: 1, total: Number.POSITIVE_INFINITY, message: 'x'.repeat(MAX_PROGRESS_MESSAGE_CHARS + 50) });
    expect(notice?.total).toBeUndefined();
    expect(notice?.message).toHaveLength(MAX_PROGRESS_MESSAGE_CHARS);
  });

  it('relays at most MAX_PROGRESS_PER_ATTEMPT notices of one attempt', () => {
    const gate = new ProgressGate(ID, 1);
    const passed = Array.from({ length: MAX_PROGRESS_PER_ATTEMPT + 20 }, (_, i) => gate.accept({ progress: i })).filter(Boolean);
    expect(passed).toHaveLength(MAX_PROGRESS_PER_ATTEMPT);
  });

  it('closes an attempt with its last value marked ended, or 0 when nothing went out', () => {
    expect(new ProgressGate(ID, 3).end()).toEqual({ intentId: ID, attempt: 3, progress: 0, ended: true });
    const gate = new ProgressGate(ID, 1);
    gate.accept({ progress: 40, total: 100 });
    gate.accept({ progress: 20 });
    expect(gate.end()).toEqual({ intentId: ID, attempt: 1, progress: 40, ended: true });
  });
});

describe('relayProgress', () => {
  it('publishes in order, one after the other, the closing notice last, and a failed publish loses only that notice', async () => {
    const published: (number | string)[] = [];
    const lost: unknown[] = [];
    let inFlight = 0;
    const relay = relayProgress(ID, 1, async (p) => {
      inFlight++;
      expect(inFlight).toBe(1);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      if (p.progress === 1) throw new Error('broker away');
      published.push(p.ended ? `ended at ${p.progress}` : p.progress);
    }, (e) => lost.push(e));
    for (const progress of [0, 1, 1, 2, 3]) relay.listen({ progress });
    await relay.end();
    expect(published).toEqual([0, 2, 3, 'ended at 3']);
    expect(lost).toHaveLength(1);
  });
});
