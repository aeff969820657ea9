import fc from 'fast-check';
import { isTransientFailure, retryDelayMs } from './failure-policy';

/** Issue 11 point 3: which failures may park an event, and how long a failing event is retried. */
describe('failure policy', () => {
  const withCode = (code: string) => Object.assign(new Error('x'), { code });

  it('never parks for an unreachable database, a shutdown, exhausted resources or a lost serialization race', () => {
    for (const code of ['08006', '08003', '57P01', '53300', '40001', '40P01', 'ECONNRESET', 'ECONNREFUSED']) expect(isTransientFailure(withCode(code))).toBe(true);
    expect(isTransientFailure(new Error('Connection terminated unexpectedly'))).toBe(true);
  });

  it("treats the handler's own errors and the data's (out of range, constraint, bad input) as the event's", () => {
    for (const code of ['22003', '23505', '23514', '22P02', 'P0001']) expect(isTransientFailure(withCode(code))).toBe(false);
    expect(isTransientFailure(new RangeError('amount out of range'))).toBe(false);
    expect(isTransientFailure(undefined)).toBe(false);
  });

  it('backs off from 100 ms, doubling, never above 2 s', () => {
    expect([2, 3, 4, 5, 6, 7].map(retryDelayMs)).toEqual([100, 200, 400, 800, 1600, 2000]);
    fc.assert(fc.property(fc.integer({ min: 2, max: 1000 }), (a) => retryDelayMs(a + 1) >= retryDelayMs(a) && retryDelayMs(a) <= 2000));
  });
});
